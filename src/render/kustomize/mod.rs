//! Native `kustomize build` with provenance.
