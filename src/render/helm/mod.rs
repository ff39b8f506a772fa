//! Native `helm template`: chart loading, values, rendering through gotmpl.
