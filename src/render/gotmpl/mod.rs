//! Go text/template engine with Sprig and Helm functions (see value.rs for the data model).

pub mod funcs;
pub mod value;
