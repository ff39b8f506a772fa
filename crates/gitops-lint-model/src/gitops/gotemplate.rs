//! ApplicationSet `goTemplate: true`: parameters rendered with Go text/template and Sprig
//! (minus `env`, `expandenv` and `getHostByName`, as the ApplicationSet controller has it).

use crate::render::gotmpl::funcs::{self, FuncEnv};
use crate::render::gotmpl::value::Value;
use crate::render::gotmpl::{ExecOptions, Templates};
use std::rc::Rc;

fn resolver(name: &str) -> Option<funcs::Func> {
    match name {
        "env" | "expandenv" | "getHostByName" => None,
        _ => funcs::lookup(name),
    }
}

/// Render one template string of an ApplicationSet with one parameter set.
pub fn render(text: &str, params: &serde_json::Value) -> Result<String, String> {
    let mut env = FuncEnv::default();
    let dot = funcs::lookup("fromJson").ok_or("fromJson is missing")?(
        &mut env,
        &[Value::str(params.to_string())],
    )?;
    let mut set = Templates::new(Rc::new(resolver));
    set.parse("appset", text).map_err(|e| e.message)?;
    let out = set
        .execute("appset", dot, &ExecOptions::default(), &mut env)
        .map_err(|e| e.message)?;
    Ok(out.text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn renders_go_templates_with_sprig() {
        let p = serde_json::json!({"path": {"basename": "Billing", "path": "apps/billing"}});
        assert_eq!(
            super::render("{{ .path.basename | lower }}-{{ .path.path }}", &p)
                .ok()
                .as_deref(),
            Some("billing-apps/billing")
        );
        assert!(super::render("{{ env \"HOME\" }}", &p).is_err());
    }
}
