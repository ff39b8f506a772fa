//! Native `helm template`: chart loading, values, rendering through gotmpl.

pub mod chart;
pub mod coalesce;
pub mod deps;
pub mod glob;
pub mod ignore;
pub mod semver;
pub mod strvals;
pub mod values;
