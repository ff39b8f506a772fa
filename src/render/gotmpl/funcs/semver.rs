//! semver / semverCompare (Masterminds/semver v3). Placeholder.

use super::super::value::Value;
use super::FuncEnv;

type R = Result<Value, String>;

pub fn semver_fn(_: &mut FuncEnv, _: &[Value]) -> R {
    Err("semver is not supported yet".into())
}

pub fn semver_compare(_: &mut FuncEnv, _: &[Value]) -> R {
    Err("semverCompare is not supported yet".into())
}
