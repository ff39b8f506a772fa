//! Go's time layouts. Placeholder.
