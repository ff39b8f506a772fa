//! Hash maps for the hot lookups of a lint: schema types by name for every field of every
//! object, values origins and template files for every rendered node. std's SipHash took
//! about 5% of a lint's instructions there (callgrind, 6,000-object bench). foldhash is a
//! faster hash that is still seeded per process, so keys a repo chooses cannot be aimed at
//! one bucket.

pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
