//! Helm's toToml / fromToml (BurntSushi/toml). Not implemented yet.

use super::super::value::{Map, Value};
use super::FuncEnv;
use super::args::arity;

type R = Result<Value, String>;

pub fn to_toml(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("toToml", a, 1)?;
    Err("toToml is not supported by this renderer yet".into())
}

pub fn from_toml(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("fromToml", a, 1)?;
    let mut m = Map::new();
    m.insert(
        "Error".into(),
        Value::from("fromToml is not supported by this renderer yet"),
    );
    Ok(Value::map(m))
}
