//! The function library: Sprig (v3.3.0, as Helm 3.18 exposes it) and Helm's pure functions.
//!
//! Contract with the executor: every function is a plain `Func` over evaluated arguments.
//! Functions that need the engine itself (`include`, `tpl`, `template`) live in the executor.
//!
//! Errors: a function returns `Err(message)`. Two kinds exist, as in Go's text/template:
//! - errors raised by the function itself (or a Go panic inside it, e.g. `runtime error:
//!   integer divide by zero`). The executor wraps them as `error calling NAME: message`.
//! - errors that Go's reflection-based call raises *before* calling (wrong number of
//!   arguments, an argument of the wrong type, a nil for a string parameter). Go does not
//!   prefix those. They start with [`UNWRAPPED`]; use [`classify_error`] to tell them apart
//!   and get the text without the marker.
//!
//! Other points the executor must know:
//! - In Helm the FuncMap shadows Go's builtins: Sprig's `slice` (not the builtin) is what
//!   charts call.
//! - `required` fails with its message between `HELM_ERR_START`/`HELM_ERR_END`
//!   ([`WARN_START`], [`WARN_END`]), exactly as Helm's own function, so that Helm's error
//!   cleanup can print `execution error at (FILE:LINE:COL): MESSAGE`.
//! - Randomness and time come only from [`FuncEnv`]; [`is_nondeterministic`] names the
//!   functions whose output a render-twice check must expect to vary.
//! - Sizes a template can request (repeat, until, seq, rand*, indent) are capped at
//!   [`MAX_ALLOC`] elements and nesting at [`MAX_DEPTH`] levels: over the cap
//!   is an error, never a huge allocation or a stack overflow.

mod aliases;
mod args;
mod conv;
mod crypto;
mod crypto_certs;
mod crypto_pw;
mod dates;
mod defaults;
mod dicts;
mod encoding;
pub mod gofmt;
mod gofmt_time;
mod json;
mod lists;
mod math;
pub mod memory;
mod network;
mod paths;
mod random;
mod reflect;
mod regex;
pub mod semver;
mod standin_primes;
mod strings;
mod strings_case;
mod toml;
mod tzif;
mod unicode;
mod yaml_json;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod vectors;

use super::value::Value;

pub use args::{MAX_ALLOC, MAX_DEPTH, UNWRAPPED};
pub use conv::strval;
pub use defaults::{WARN_END, WARN_START};
pub use encoding::base64_decode;
pub use gofmt::format_v;

/// What a function may read besides its arguments: the clock and the random source. Kept
/// explicit so that a render can be repeated with another seed, clock and zone (the
/// render-twice non-determinism check) and so tests are reproducible.
pub struct FuncEnv {
    /// Seed of the random source used by rand*, uuidv4, shuffle, gen*, bcrypt salts. It is
    /// also the generator's state: every draw advances it, so one render is reproducible
    /// from its initial seed and two renders with different seeds differ.
    seed: u64,
    /// Unix time in nanoseconds that `now` returns.
    now_unix_nanos: i128,
    /// Offset east of UTC, in seconds, of the "local" time zone (`now`, `date`, `ago`).
    utc_offset_secs: i32,
    /// Whether any function read the seed, the clock or the zone: a render that did not
    /// renders the same with any other (the render-twice check needs no second render).
    clock_read: bool,
    /// Key generations and password hashes this render may still compute (see
    /// [`MAX_HEAVY_CALLS`]).
    pub heavy_calls_left: u32,
    /// Bytes of values this render may still create (`limits.max-render-memory-bytes`).
    pub memory: memory::MemoryBudget,
    /// Where random values and keys come from.
    pub entropy: Entropy,
    /// When the render must stop (`limits.max-render-seconds`): key generation and password
    /// hashing check it before each call, since one call can take a second.
    pub deadline: Option<std::time::Instant>,
}

/// Where a render's random values and keys come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entropy {
    /// Lint: the seeded generator (a second render with another seed shows what varies)
    /// and stand-in keys (`crypto_certs::gen_rsa`): that output is tainted and never shown.
    Seeded,
    /// `helm template` / `render`: the output is printed and may be applied, so random
    /// values come from the OS random source and keys are really generated, as in helm.
    Os,
}

/// Key generation and password hashing (genPrivateKey, genCA, gen*Cert, bcrypt, htpasswd,
/// derivePassword) cost 0.1–1 s each, so a loop over them in a pull request would stall the
/// linter for hours (found by fuzzing). Charts call them a handful of times; a render may
/// call them this often in all.
pub const MAX_HEAVY_CALLS: u32 = 16;

/// Set once by a command that prints what the lint pipeline rendered (`render --app`):
/// every render of the process then draws from the OS and generates real keys.
static OUTPUT_IS_PRINTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For commands that print rendered manifests the lint pipeline made: no seeded random
/// values or stand-in keys may reach that output.
pub fn renders_are_printed() {
    OUTPUT_IS_PRINTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

impl FuncEnv {
    pub fn new(seed: u64, now_unix_nanos: i128, utc_offset_secs: i32) -> FuncEnv {
        FuncEnv {
            seed,
            now_unix_nanos,
            utc_offset_secs,
            clock_read: false,
            heavy_calls_left: MAX_HEAVY_CALLS,
            memory: memory::MemoryBudget::default(),
            entropy: if OUTPUT_IS_PRINTED.load(std::sync::atomic::Ordering::Relaxed) {
                Entropy::Os
            } else {
                Entropy::Seeded
            },
            deadline: None,
        }
    }

    /// Charge one heavy call to this render's budget; over it, the call fails.
    pub fn spend_heavy(&mut self, name: &str) -> Result<(), String> {
        if self.deadline.is_some_and(|d| std::time::Instant::now() > d) {
            return Err(format!(
                "{name}: rendering took longer than the time limit (limits.max-render-seconds)"
            ));
        }
        match self.heavy_calls_left.checked_sub(1) {
            Some(left) => {
                self.heavy_calls_left = left;
                Ok(())
            }
            None => Err(format!(
                "{name}: more than {MAX_HEAVY_CALLS} key generations or password hashes in one render (gitops-lint's limit)"
            )),
        }
    }

    /// Unix time in nanoseconds that `now` returns.
    pub fn now_unix_nanos(&mut self) -> i128 {
        self.clock_read = true;
        self.now_unix_nanos
    }

    /// Offset east of UTC, in seconds, of the "local" time zone.
    pub fn utc_offset_secs(&mut self) -> i32 {
        self.clock_read = true;
        self.utc_offset_secs
    }

    /// Whether this render read the seed, the clock or the zone (see `clock_read`).
    pub fn clock_was_read(&self) -> bool {
        self.clock_read
    }

    /// Next 64 random bits (splitmix64: fast, not cryptographic,
    /// which is fine for a linter that only needs the *shape* of random output).
    pub fn next_u64(&mut self) -> u64 {
        self.clock_read = true;
        if self.entropy == Entropy::Os {
            return rand_core::RngCore::next_u64(&mut rand_core::OsRng);
        }
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform integer in `0..n` (n > 0), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    pub fn fill_bytes(&mut self, out: &mut [u8]) {
        if self.entropy == Entropy::Os {
            return rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, out);
        }
        for chunk in out.chunks_mut(8) {
            let w = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
}

impl Default for FuncEnv {
    /// Seed 0, the Unix epoch, UTC: fully reproducible.
    fn default() -> Self {
        FuncEnv::new(0, 0, 0)
    }
}

pub type Func = fn(&mut FuncEnv, &[Value]) -> Result<Value, String>;

/// Splits an error returned by a `Func`: `(true, text)` when the executor must wrap it as
/// `error calling NAME: text`, `(false, text)` for Go's own pre-call errors (arity, types).
pub fn classify_error(msg: &str) -> (bool, &str) {
    match msg.strip_prefix(UNWRAPPED) {
        Some(rest) => (false, rest),
        None => (true, msg),
    }
}

/// Every function of Helm 3.18's FuncMap except Go's builtins and the executor's own
/// (`include`, `tpl`, `template`), sorted by name (a test checks the order). `env` and
/// `expandenv` are absent, as in Helm.
pub static FUNCS: &[(&str, Func)] = &[
    ("abbrev", strings::abbrev),
    ("abbrevboth", strings::abbrevboth),
    ("add", math::add),
    ("add1", math::add1),
    ("add1f", math::add1f),
    ("addf", math::addf),
    ("adler32sum", crypto::adler32sum),
    ("ago", dates::ago),
    ("all", defaults::all),
    ("any", defaults::any),
    ("append", lists::push),
    ("atoi", conv::atoi),
    ("b32dec", encoding::b32dec),
    ("b32enc", encoding::b32enc),
    ("b64dec", encoding::b64dec),
    ("b64enc", encoding::b64enc),
    ("base", paths::base),
    ("bcrypt", crypto::bcrypt_fn),
    ("biggest", aliases::biggest),
    ("buildCustomCert", crypto::build_custom_cert),
    ("camelcase", strings::camelcase),
    ("cat", strings::cat),
    ("ceil", math::ceil),
    ("chunk", lists::chunk),
    ("clean", paths::clean),
    ("coalesce", defaults::coalesce),
    ("compact", lists::compact),
    ("concat", lists::concat),
    ("contains", strings::contains),
    ("date", dates::date),
    ("dateInZone", dates::date_in_zone),
    ("dateModify", dates::date_modify),
    ("date_in_zone", aliases::date_in_zone_snake),
    ("date_modify", aliases::date_modify_snake),
    ("decryptAES", crypto::decrypt_aes),
    ("deepCopy", defaults::deep_copy),
    ("deepEqual", reflect::deep_equal_fn),
    ("default", defaults::default),
    ("derivePassword", crypto::derive_password),
    ("dict", dicts::dict),
    ("dig", dicts::dig),
    ("dir", paths::dir),
    ("div", math::div),
    ("divf", math::divf),
    ("duration", dates::duration),
    ("durationRound", dates::duration_round),
    ("empty", defaults::empty),
    ("encryptAES", crypto::encrypt_aes),
    ("ext", paths::ext),
    ("fail", defaults::fail),
    ("first", lists::first),
    ("float64", conv::float64),
    ("floor", math::floor),
    ("fromJson", yaml_json::from_json),
    ("fromJsonArray", yaml_json::from_json_array),
    ("fromToml", toml::from_toml),
    ("fromYaml", yaml_json::from_yaml),
    ("fromYamlArray", yaml_json::from_yaml_array),
    ("genCA", crypto::gen_ca),
    ("genCAWithKey", crypto::gen_ca_with_key),
    ("genPrivateKey", crypto::gen_private_key),
    ("genSelfSignedCert", crypto::gen_self_signed_cert),
    (
        "genSelfSignedCertWithKey",
        crypto::gen_self_signed_cert_with_key,
    ),
    ("genSignedCert", crypto::gen_signed_cert),
    ("genSignedCertWithKey", crypto::gen_signed_cert_with_key),
    ("get", dicts::get),
    ("getHostByName", network::get_host_by_name),
    ("has", lists::has),
    ("hasKey", dicts::has_key),
    ("hasPrefix", strings::has_prefix),
    ("hasSuffix", strings::has_suffix),
    ("hello", strings::hello),
    ("htmlDate", dates::html_date),
    ("htmlDateInZone", dates::html_date_in_zone),
    ("htpasswd", crypto::htpasswd),
    ("indent", strings::indent),
    ("initial", lists::initial),
    ("initials", strings::initials),
    ("int", conv::int),
    ("int64", conv::int64),
    ("isAbs", paths::is_abs),
    ("join", strings::join),
    ("kebabcase", strings::kebabcase),
    ("keys", dicts::keys),
    ("kindIs", reflect::kind_is),
    ("kindOf", reflect::kind_of),
    ("last", lists::last),
    ("list", lists::list),
    ("lookup", defaults::lookup_placeholder),
    ("lower", strings::lower),
    ("max", math::max),
    ("maxf", math::maxf),
    ("merge", dicts::merge),
    ("mergeOverwrite", dicts::merge_overwrite),
    ("min", math::min),
    ("minf", math::minf),
    ("mod", math::modulo),
    ("mul", math::mul),
    ("mulf", math::mulf),
    ("mustAppend", lists::must_push),
    ("mustChunk", lists::must_chunk),
    ("mustCompact", lists::must_compact),
    ("mustDateModify", dates::must_date_modify),
    ("mustDeepCopy", defaults::must_deep_copy),
    ("mustFirst", lists::must_first),
    ("mustFromJson", yaml_json::must_from_json),
    ("mustHas", lists::must_has),
    ("mustInitial", lists::must_initial),
    ("mustLast", lists::must_last),
    ("mustMerge", dicts::must_merge),
    ("mustMergeOverwrite", dicts::must_merge_overwrite),
    ("mustPrepend", lists::must_prepend),
    ("mustPush", aliases::must_push),
    ("mustRegexFind", regex::must_regex_find),
    ("mustRegexFindAll", regex::must_regex_find_all),
    ("mustRegexMatch", regex::must_regex_match),
    ("mustRegexReplaceAll", regex::must_regex_replace_all),
    (
        "mustRegexReplaceAllLiteral",
        regex::must_regex_replace_all_literal,
    ),
    ("mustRegexSplit", regex::must_regex_split),
    ("mustRest", lists::must_rest),
    ("mustReverse", lists::must_reverse),
    ("mustSlice", lists::must_slice),
    ("mustToDate", dates::must_to_date),
    ("mustToJson", yaml_json::must_to_json),
    ("mustToPrettyJson", yaml_json::must_to_pretty_json),
    ("mustToRawJson", yaml_json::must_to_raw_json),
    ("mustToYaml", yaml_json::must_to_yaml),
    ("mustUniq", lists::must_uniq),
    ("mustWithout", lists::must_without),
    ("must_date_modify", aliases::must_date_modify_snake),
    ("nindent", strings::nindent),
    ("nospace", strings::nospace),
    ("now", dates::now),
    ("omit", dicts::omit),
    ("osBase", aliases::os_base),
    ("osClean", aliases::os_clean),
    ("osDir", aliases::os_dir),
    ("osExt", aliases::os_ext),
    ("osIsAbs", aliases::os_is_abs),
    ("pick", dicts::pick),
    ("pluck", dicts::pluck),
    ("plural", strings::plural),
    ("prepend", lists::prepend),
    ("push", aliases::push),
    ("quote", strings::quote),
    ("randAlpha", random::rand_alpha),
    ("randAlphaNum", random::rand_alpha_num),
    ("randAscii", random::rand_ascii),
    ("randBytes", random::rand_bytes),
    ("randInt", random::rand_int),
    ("randNumeric", random::rand_numeric),
    ("regexFind", regex::regex_find),
    ("regexFindAll", regex::regex_find_all),
    ("regexMatch", regex::regex_match),
    ("regexQuoteMeta", regex::regex_quote_meta),
    ("regexReplaceAll", regex::regex_replace_all),
    ("regexReplaceAllLiteral", regex::regex_replace_all_literal),
    ("regexSplit", regex::regex_split),
    ("repeat", strings::repeat),
    ("replace", strings::replace),
    ("required", defaults::required),
    ("rest", lists::rest),
    ("reverse", lists::reverse),
    ("round", math::round),
    ("semver", semver::semver_fn),
    ("semverCompare", semver::semver_compare),
    ("seq", math::seq),
    ("set", dicts::set),
    ("sha1sum", crypto::sha1sum),
    ("sha256sum", crypto::sha256sum),
    ("sha512sum", crypto::sha512sum),
    ("shuffle", random::shuffle),
    ("slice", lists::slice),
    ("snakecase", strings::snakecase),
    ("sortAlpha", strings::sort_alpha),
    ("split", strings::split),
    ("splitList", strings::split_list),
    ("splitn", strings::splitn),
    ("squote", strings::squote),
    ("sub", math::sub),
    ("subf", math::subf),
    ("substr", strings::substr),
    ("swapcase", strings::swapcase),
    ("ternary", defaults::ternary),
    ("title", strings::title),
    ("toDate", dates::to_date),
    ("toDecimal", conv::to_decimal),
    ("toJson", yaml_json::to_json),
    ("toPrettyJson", yaml_json::to_pretty_json),
    ("toRawJson", yaml_json::to_raw_json),
    ("toString", conv::to_string),
    ("toStrings", conv::to_strings),
    ("toToml", toml::to_toml),
    ("toYaml", yaml_json::to_yaml),
    ("toYamlPretty", yaml_json::to_yaml_pretty),
    ("trim", strings::trim),
    ("trimAll", strings::trim_all),
    ("trimPrefix", strings::trim_prefix),
    ("trimSuffix", strings::trim_suffix),
    ("trimall", aliases::trimall),
    ("trunc", strings::trunc),
    ("tuple", lists::list),
    ("typeIs", reflect::type_is),
    ("typeIsLike", reflect::type_is_like),
    ("typeOf", reflect::type_of),
    ("uniq", lists::uniq),
    ("unixEpoch", dates::unix_epoch),
    ("unset", dicts::unset),
    ("until", math::until),
    ("untilStep", math::until_step),
    ("untitle", strings::untitle),
    ("upper", strings::upper),
    ("urlJoin", network::url_join),
    ("urlParse", network::url_parse),
    ("uuidv4", random::uuidv4),
    ("values", dicts::values),
    ("without", lists::without),
    ("wrap", strings::wrap),
    ("wrapWith", strings::wrap_with),
];

/// The function named `name`.
pub fn lookup(name: &str) -> Option<Func> {
    FUNCS
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .ok()
        .map(|i| FUNCS[i].1)
}

/// Functions whose output depends on randomness, the clock, the local time zone, map
/// iteration order or the cluster: a chart that lets their result reach
/// a manifest renders differently each time (or differently under Argo CD and Flux).
pub fn is_nondeterministic(name: &str) -> bool {
    matches!(
        name,
        // random (crypto/rand or math/rand)
        "randAlphaNum"
            | "randAlpha"
            | "randAscii"
            | "randNumeric"
            | "randBytes"
            | "randInt"
            | "shuffle"
            | "uuidv4"
            // clock and local time zone
            | "now"
            | "date"
            | "htmlDate"
            | "dateInZone"
            | "date_in_zone"
            | "htmlDateInZone"
            | "ago"
            | "durationRound"
            | "toDate"
            | "mustToDate"
            // random keys, serials and validity windows
            | "genPrivateKey"
            | "genCA"
            | "genCAWithKey"
            | "genSelfSignedCert"
            | "genSelfSignedCertWithKey"
            | "genSignedCert"
            | "genSignedCertWithKey"
            // random salt or IV
            | "bcrypt"
            | "htpasswd"
            | "encryptAES"
            // Go map iteration order
            | "keys"
            | "values"
            // environment: the cluster, DNS
            | "lookup"
            | "getHostByName"
    )
}

/// Every name [`lookup`] knows, for tests and for the linter's function tables.
pub const ALL_NAMES: &[&str] = &[
    "toYaml",
    "mustToYaml",
    "toYamlPretty",
    "fromYaml",
    "fromYamlArray",
    "toJson",
    "mustToJson",
    "fromJson",
    "fromJsonArray",
    "toToml",
    "fromToml",
    "required",
    "lookup",
    "ago",
    "date",
    "htmlDate",
    "date_in_zone",
    "dateInZone",
    "htmlDateInZone",
    "date_modify",
    "dateModify",
    "must_date_modify",
    "mustDateModify",
    "duration",
    "durationRound",
    "mustToDate",
    "toDate",
    "now",
    "unixEpoch",
    "hello",
    "abbrev",
    "abbrevboth",
    "trunc",
    "trim",
    "upper",
    "lower",
    "title",
    "untitle",
    "substr",
    "repeat",
    "trimall",
    "trimAll",
    "trimSuffix",
    "trimPrefix",
    "nospace",
    "initials",
    "swapcase",
    "snakecase",
    "camelcase",
    "kebabcase",
    "wrap",
    "wrapWith",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "quote",
    "squote",
    "cat",
    "indent",
    "nindent",
    "replace",
    "plural",
    "split",
    "splitList",
    "splitn",
    "join",
    "sortAlpha",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "shuffle",
    "randInt",
    "randBytes",
    "uuidv4",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "adler32sum",
    "b64enc",
    "b64dec",
    "b32enc",
    "b32dec",
    "toString",
    "toStrings",
    "atoi",
    "int64",
    "int",
    "float64",
    "toDecimal",
    "seq",
    "until",
    "untilStep",
    "add1",
    "add",
    "sub",
    "div",
    "mod",
    "mul",
    "add1f",
    "addf",
    "subf",
    "divf",
    "mulf",
    "biggest",
    "max",
    "min",
    "maxf",
    "minf",
    "ceil",
    "floor",
    "round",
    "default",
    "empty",
    "coalesce",
    "all",
    "any",
    "ternary",
    "deepCopy",
    "mustDeepCopy",
    "fail",
    "toPrettyJson",
    "mustToPrettyJson",
    "toRawJson",
    "mustToRawJson",
    "mustFromJson",
    "typeOf",
    "typeIs",
    "typeIsLike",
    "kindOf",
    "kindIs",
    "deepEqual",
    "getHostByName",
    "urlParse",
    "urlJoin",
    "base",
    "dir",
    "clean",
    "ext",
    "isAbs",
    "osBase",
    "osClean",
    "osDir",
    "osExt",
    "osIsAbs",
    "dict",
    "get",
    "set",
    "unset",
    "hasKey",
    "pluck",
    "keys",
    "pick",
    "omit",
    "merge",
    "mustMerge",
    "mergeOverwrite",
    "mustMergeOverwrite",
    "values",
    "dig",
    "list",
    "tuple",
    "append",
    "push",
    "mustAppend",
    "mustPush",
    "prepend",
    "mustPrepend",
    "first",
    "mustFirst",
    "rest",
    "mustRest",
    "last",
    "mustLast",
    "initial",
    "mustInitial",
    "reverse",
    "mustReverse",
    "uniq",
    "mustUniq",
    "without",
    "mustWithout",
    "has",
    "mustHas",
    "slice",
    "mustSlice",
    "concat",
    "chunk",
    "mustChunk",
    "compact",
    "mustCompact",
    "bcrypt",
    "htpasswd",
    "derivePassword",
    "genPrivateKey",
    "buildCustomCert",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "decryptAES",
    "semver",
    "semverCompare",
    "regexMatch",
    "mustRegexMatch",
    "regexFindAll",
    "mustRegexFindAll",
    "regexFind",
    "mustRegexFind",
    "regexReplaceAll",
    "mustRegexReplaceAll",
    "regexReplaceAllLiteral",
    "mustRegexReplaceAllLiteral",
    "regexSplit",
    "mustRegexSplit",
    "regexQuoteMeta",
];
