//! Second names of the same Go function (`biggest` = `max`, `osBase` = `base`, ...). Go
//! reports an arity error under the name the template used, so each alias renames it.

use super::super::value::Value;
use super::args::UNWRAPPED;
use super::{FuncEnv, dates, lists, math, paths, strings};

fn rename(msg: String, primary: &str, alias: &str) -> String {
    let from = format!("{UNWRAPPED}wrong number of args for {primary}:");
    match msg.strip_prefix(&from) {
        Some(rest) => format!("{UNWRAPPED}wrong number of args for {alias}:{rest}"),
        None => msg,
    }
}

macro_rules! alias {
    ($($fname:ident = $alias:literal for $primary:literal => $target:path;)*) => {$(
        pub fn $fname(e: &mut FuncEnv, a: &[Value]) -> Result<Value, String> {
            $target(e, a).map_err(|m| rename(m, $primary, $alias))
        }
    )*};
}

alias! {
    date_in_zone_snake = "date_in_zone" for "dateInZone" => dates::date_in_zone;
    date_modify_snake = "date_modify" for "dateModify" => dates::date_modify;
    must_date_modify_snake = "must_date_modify" for "mustDateModify" => dates::must_date_modify;
    trimall = "trimall" for "trimAll" => strings::trim_all;
    biggest = "biggest" for "max" => math::max;
    push = "push" for "append" => lists::push;
    must_push = "mustPush" for "mustAppend" => lists::must_push;
    os_base = "osBase" for "base" => paths::base;
    os_clean = "osClean" for "clean" => paths::clean;
    os_dir = "osDir" for "dir" => paths::dir;
    os_ext = "osExt" for "ext" => paths::ext;
    os_is_abs = "osIsAbs" for "isAbs" => paths::is_abs;
}

#[cfg(test)]
mod tests {
    #[test]
    fn arity_errors_use_the_alias() {
        let mut e = super::FuncEnv::default();
        let err = super::os_base(&mut e, &[]).err().unwrap_or_default();
        assert_eq!(
            err,
            format!(
                "{}wrong number of args for osBase: want 1 got 0",
                super::UNWRAPPED
            )
        );
    }
}
