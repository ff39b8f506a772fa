//! Date functions. Placeholder.

use super::super::value::Value;
use super::FuncEnv;

type R = Result<Value, String>;

macro_rules! stub {
    ($($f:ident),*) => {$(
        pub fn $f(_: &mut FuncEnv, _: &[Value]) -> R {
            Err(concat!(stringify!($f), " is not supported yet").into())
        }
    )*};
}
stub!(
    ago,
    date,
    date_in_zone,
    date_modify,
    must_date_modify,
    duration,
    duration_round,
    must_to_date,
    to_date,
    now,
    unix_epoch
);
