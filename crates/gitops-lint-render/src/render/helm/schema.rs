//! `values.schema.json` validation with Helm 3.18's validator semantics and texts
//! (gojsonschema: draft-04/06/07 keywords that charts use, errors as `- field: message`).

use super::chart::Chart;
use crate::render::gotmpl::value::Value;
use serde_json::Value as J;

/// Helm's `ValidateAgainstSchema`: the chart's schema, then each subchart's on its scope.
pub fn validate_chart(chart: &Chart, values: &Value) -> Result<(), String> {
    let mut sb = String::new();
    if let Some(schema) = &chart.schema
        && let Err(e) = validate_text(&schema.text(), values)
    {
        sb.push_str(&format!("{}:\n{e}", chart.name()));
    }
    for sub in &chart.dependencies {
        let sv = super::values::get(values, sub.name()).unwrap_or(Value::map(Default::default()));
        if let Err(e) = validate_chart(sub, &sv) {
            sb.push_str(&e);
        }
    }
    if sb.is_empty() { Ok(()) } else { Err(sb) }
}

/// Validate values against one schema text; errors as Helm lists them (`- x: y\n` each).
pub fn validate_text(schema_text: &str, values: &Value) -> Result<(), String> {
    let schema: J = serde_json::from_str(schema_text).map_err(|e| e.to_string())?;
    let doc = match to_json(values) {
        J::Null => J::Object(Default::default()),
        other => other,
    };
    let mut v = Validator {
        root: &schema,
        errors: Vec::new(),
        depth: 0,
    };
    v.validate(&schema, &doc, "(root)");
    if v.errors.is_empty() {
        return Ok(());
    }
    let mut out = String::new();
    for (field, msg) in v.errors {
        out.push_str(&format!("- {field}: {msg}\n"));
    }
    Err(out)
}

/// Validate a JSON document against a JSON schema: `- field: message` per problem, as
/// for values (the configuration's published schema is tested with it).
pub fn validate_json(schema: &J, doc: &J) -> Vec<String> {
    let mut v = Validator {
        root: schema,
        errors: Vec::new(),
        depth: 0,
    };
    v.validate(schema, doc, "(root)");
    v.errors
        .into_iter()
        .map(|(field, msg)| format!("- {field}: {msg}"))
        .collect()
}

/// Values as JSON (what `yaml.Marshal` + `YAMLToJSON` give the validator).
pub fn to_json(v: &Value) -> J {
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) | Value::Int64(i) => J::from(*i),
        Value::Uint(u) => J::from(*u),
        Value::Float(f) => {
            if f.fract() == 0.0 && f.abs() < 9.0e15 {
                J::from(*f as i64)
            } else {
                serde_json::Number::from_f64(*f)
                    .map(J::Number)
                    .unwrap_or(J::Null)
            }
        }
        Value::String(s) => J::String(s.to_string()),
        Value::Bytes(b) => J::String(String::from_utf8_lossy(b).into_owned()),
        Value::List(l) => J::Array(l.iter().map(to_json).collect()),
        Value::Map(m) => J::Object(
            m.borrow()
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
        Value::Object(o) => match super::values::JsonNumber::of(v) {
            Some(n) => serde_json::from_str::<serde_json::Number>(&n.text)
                .map(J::Number)
                .unwrap_or(J::Null),
            None => J::String(o.format()),
        },
    }
}

struct Validator<'a> {
    root: &'a J,
    errors: Vec<(String, String)>,
    depth: usize,
}

fn field_name(ctx: &str) -> String {
    ctx.strip_prefix("(root).").unwrap_or(ctx).to_string()
}

fn type_of(v: &J) -> &'static str {
    match v {
        J::Null => "null",
        J::Bool(_) => "boolean",
        J::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                "integer"
            } else {
                "number"
            }
        }
        J::String(_) => "string",
        J::Array(_) => "array",
        J::Object(_) => "object",
    }
}

fn type_ok(expected: &str, v: &J) -> bool {
    let given = type_of(v);
    expected == given || (expected == "number" && given == "integer")
}

/// Numbers as gojsonschema prints them (`0`, `1.5`).
fn num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

fn json_eq(a: &J, b: &J) -> bool {
    match (a, b) {
        (J::Number(x), J::Number(y)) => x.as_f64() == y.as_f64(),
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

impl<'a> Validator<'a> {
    fn err(&mut self, ctx: &str, msg: String) {
        self.errors.push((field_name(ctx), msg));
    }

    fn resolve(&self, reference: &str) -> Option<&'a J> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            return Some(self.root);
        }
        self.root.pointer(pointer)
    }

    /// Errors a subschema would report, without recording them.
    fn sub(&mut self, schema: &'a J, v: &J, ctx: &str) -> Vec<(String, String)> {
        let saved = std::mem::take(&mut self.errors);
        self.validate(schema, v, ctx);
        std::mem::replace(&mut self.errors, saved)
    }

    fn validate(&mut self, schema: &'a J, v: &J, ctx: &str) {
        if self.depth > 64 {
            return;
        }
        let s = match schema {
            J::Bool(false) => {
                self.err(ctx, "False always fails validation".into());
                return;
            }
            J::Object(s) => s,
            _ => return,
        };
        if let Some(J::String(r)) = s.get("$ref") {
            if let Some(target) = self.resolve(r) {
                self.depth += 1;
                self.validate(target, v, ctx);
                self.depth -= 1;
            }
            return;
        }
        // type
        let types: Vec<&str> = match s.get("type") {
            Some(J::String(t)) => vec![t.as_str()],
            Some(J::Array(ts)) => ts.iter().filter_map(J::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() && !types.iter().any(|t| type_ok(t, v)) {
            let expected = if types.len() == 1 {
                types[0].to_string()
            } else {
                format!("[{}]", types.join(","))
            };
            self.err(
                ctx,
                format!("Invalid type. Expected: {expected}, given: {}", type_of(v)),
            );
            return;
        }
        self.validate_schema_keywords(s, v, ctx);
        match v {
            J::Number(n) => {
                let x = n.as_f64().unwrap_or(0.0);
                self.validate_number(s, x, ctx);
                self.validate_common(s, v, ctx);
            }
            J::Array(items) => {
                self.validate_array(s, items, ctx);
                self.validate_common(s, v, ctx);
            }
            J::Object(obj) => {
                self.validate_object(s, obj, ctx);
                self.validate_common(s, v, ctx);
                if let Some(J::Object(props)) = s.get("properties") {
                    let mut keys: Vec<&String> = props.keys().collect();
                    keys.sort();
                    for k in keys {
                        if let (Some(ps), Some(child)) = (props.get(k), obj.get(k)) {
                            self.depth += 1;
                            self.validate(ps, child, &format!("{ctx}.{k}"));
                            self.depth -= 1;
                        }
                    }
                }
            }
            J::String(st) => {
                self.validate_common(s, v, ctx);
                self.validate_string(s, st, ctx);
            }
            _ => self.validate_common(s, v, ctx),
        }
    }

    fn validate_schema_keywords(&mut self, s: &'a serde_json::Map<String, J>, v: &J, ctx: &str) {
        if let Some(J::Array(any)) = s.get("anyOf") {
            let mut best: Option<Vec<(String, String)>> = None;
            let mut ok = false;
            for sch in any {
                let errs = self.sub(sch, v, ctx);
                if errs.is_empty() {
                    ok = true;
                    break;
                }
                if best.as_ref().is_none_or(|b| errs.len() < b.len()) {
                    best = Some(errs);
                }
            }
            if !ok {
                self.err(ctx, "Must validate at least one schema (anyOf)".into());
                self.errors.extend(best.unwrap_or_default());
            }
        }
        if let Some(J::Array(one)) = s.get("oneOf") {
            let mut passed = 0;
            let mut best: Option<Vec<(String, String)>> = None;
            for sch in one {
                let errs = self.sub(sch, v, ctx);
                if errs.is_empty() {
                    passed += 1;
                } else if best.as_ref().is_none_or(|b| errs.len() < b.len()) {
                    best = Some(errs);
                }
            }
            if passed != 1 {
                self.err(ctx, "Must validate one and only one schema (oneOf)".into());
                if passed == 0 {
                    self.errors.extend(best.unwrap_or_default());
                }
            }
        }
        if let Some(J::Array(all)) = s.get("allOf") {
            let mut failed = false;
            for sch in all {
                let errs = self.sub(sch, v, ctx);
                if !errs.is_empty() {
                    failed = true;
                    self.errors.extend(errs);
                }
            }
            if failed {
                self.err(ctx, "Must validate all the schemas (allOf)".into());
            }
        }
        if let Some(not) = s.get("not")
            && self.sub(not, v, ctx).is_empty()
        {
            self.err(ctx, "Must not validate the schema (not)".into());
        }
        if let Some(cond) = s.get("if") {
            if self.sub(cond, v, ctx).is_empty() {
                if let Some(then) = s.get("then") {
                    let errs = self.sub(then, v, ctx);
                    if !errs.is_empty() {
                        self.errors.extend(errs);
                        self.err(ctx, "Must validate \"then\" as \"if\" was valid".into());
                    }
                }
            } else if let Some(els) = s.get("else") {
                let errs = self.sub(els, v, ctx);
                if !errs.is_empty() {
                    self.errors.extend(errs);
                    self.err(ctx, "Must validate \"else\" as \"if\" was not valid".into());
                }
            }
        }
        if let (Some(J::Object(deps)), J::Object(obj)) = (s.get("dependencies"), v) {
            for (k, dep) in deps {
                if !obj.contains_key(k) {
                    continue;
                }
                match dep {
                    J::Array(req) => {
                        for r in req.iter().filter_map(J::as_str) {
                            if !obj.contains_key(r) {
                                self.err(ctx, format!("Has a dependency on {r}"));
                            }
                        }
                    }
                    sch => {
                        let errs = self.sub(sch, v, ctx);
                        self.errors.extend(errs);
                    }
                }
            }
        }
    }

    fn validate_common(&mut self, s: &serde_json::Map<String, J>, v: &J, ctx: &str) {
        if let Some(c) = s.get("const")
            && !json_eq(c, v)
        {
            self.err(ctx, format!("{} does not match: {}", field_name(ctx), c));
        }
        if let Some(J::Array(en)) = s.get("enum")
            && !en.iter().any(|e| json_eq(e, v))
        {
            let allowed: Vec<String> = en.iter().map(|e| e.to_string()).collect();
            self.err(
                ctx,
                format!(
                    "{} must be one of the following: {}",
                    field_name(ctx),
                    allowed.join(", ")
                ),
            );
        }
    }

    fn validate_number(&mut self, s: &serde_json::Map<String, J>, x: f64, ctx: &str) {
        let f = |k: &str| s.get(k).and_then(J::as_f64);
        if let Some(m) = f("multipleOf")
            && m != 0.0
            && ((x / m) - (x / m).round()).abs() > 1e-9
        {
            self.err(ctx, format!("Must be a multiple of {}", num(m)));
        }
        let excl_min_bool = matches!(s.get("exclusiveMinimum"), Some(J::Bool(true)));
        let excl_max_bool = matches!(s.get("exclusiveMaximum"), Some(J::Bool(true)));
        if let Some(m) = f("minimum") {
            if excl_min_bool && x <= m {
                self.err(ctx, format!("Must be greater than {}", num(m)));
            } else if !excl_min_bool && x < m {
                self.err(ctx, format!("Must be greater than or equal to {}", num(m)));
            }
        }
        if let Some(m) = f("exclusiveMinimum")
            && x <= m
        {
            self.err(ctx, format!("Must be greater than {}", num(m)));
        }
        if let Some(m) = f("maximum") {
            if excl_max_bool && x >= m {
                self.err(ctx, format!("Must be less than {}", num(m)));
            } else if !excl_max_bool && x > m {
                self.err(ctx, format!("Must be less than or equal to {}", num(m)));
            }
        }
        if let Some(m) = f("exclusiveMaximum")
            && x >= m
        {
            self.err(ctx, format!("Must be less than {}", num(m)));
        }
    }

    fn validate_string(&mut self, s: &serde_json::Map<String, J>, st: &str, ctx: &str) {
        let len = st.chars().count() as u64;
        if let Some(m) = s.get("minLength").and_then(J::as_u64)
            && len < m
        {
            self.err(
                ctx,
                format!("String length must be greater than or equal to {m}"),
            );
        }
        if let Some(m) = s.get("maxLength").and_then(J::as_u64)
            && len > m
        {
            self.err(
                ctx,
                format!("String length must be less than or equal to {m}"),
            );
        }
        if let Some(J::String(p)) = s.get("pattern")
            && let Ok(re) = regex::Regex::new(p)
            && !re.is_match(st)
        {
            self.err(ctx, format!("Does not match pattern '{p}'"));
        }
    }

    fn validate_array(&mut self, s: &'a serde_json::Map<String, J>, items: &[J], ctx: &str) {
        let n = items.len() as u64;
        if let Some(m) = s.get("minItems").and_then(J::as_u64)
            && n < m
        {
            self.err(ctx, format!("Array must have at least {m} items"));
        }
        if let Some(m) = s.get("maxItems").and_then(J::as_u64)
            && n > m
        {
            self.err(ctx, format!("Array must have at most {m} items"));
        }
        if matches!(s.get("uniqueItems"), Some(J::Bool(true))) {
            'outer: for i in 0..items.len() {
                for j in i + 1..items.len() {
                    if json_eq(&items[i], &items[j]) {
                        self.err(ctx, format!("array items[{i},{j}] must be unique"));
                        break 'outer;
                    }
                }
            }
        }
        match s.get("items") {
            Some(J::Array(tuple)) => {
                for (i, (sch, item)) in tuple.iter().zip(items).enumerate() {
                    self.depth += 1;
                    self.validate(sch, item, &format!("{ctx}.{i}"));
                    self.depth -= 1;
                }
                if items.len() > tuple.len() {
                    match s.get("additionalItems") {
                        Some(J::Bool(false)) => {
                            self.err(ctx, "No additional items allowed on array".into())
                        }
                        Some(sch @ J::Object(_)) => {
                            for (i, item) in items.iter().enumerate().skip(tuple.len()) {
                                self.validate(sch, item, &format!("{ctx}.{i}"));
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some(sch) => {
                for (i, item) in items.iter().enumerate() {
                    self.depth += 1;
                    self.validate(sch, item, &format!("{ctx}.{i}"));
                    self.depth -= 1;
                }
            }
            None => {}
        }
        if let Some(c) = s.get("contains")
            && !items.iter().any(|it| self.sub(c, it, ctx).is_empty())
        {
            self.err(ctx, "At least one of the items must match".into());
        }
    }

    fn validate_object(
        &mut self,
        s: &'a serde_json::Map<String, J>,
        obj: &serde_json::Map<String, J>,
        ctx: &str,
    ) {
        let n = obj.len() as u64;
        if let Some(m) = s.get("maxProperties").and_then(J::as_u64)
            && n > m
        {
            self.err(ctx, format!("Must have at most {m} properties"));
        }
        if let Some(m) = s.get("minProperties").and_then(J::as_u64)
            && n < m
        {
            self.err(ctx, format!("Must have at least {m} properties"));
        }
        if let Some(J::Array(req)) = s.get("required") {
            for r in req.iter().filter_map(J::as_str) {
                if !obj.contains_key(r) {
                    self.err(ctx, format!("{r} is required"));
                }
            }
        }
        let props = s.get("properties").and_then(J::as_object);
        let patterns: Vec<(regex::Regex, &'a J)> = s
            .get("patternProperties")
            .and_then(J::as_object)
            .map(|pp| {
                pp.iter()
                    .filter_map(|(p, sch)| regex::Regex::new(p).ok().map(|re| (re, sch)))
                    .collect()
            })
            .unwrap_or_default();
        let mut keys: Vec<&String> = obj.keys().collect();
        keys.sort();
        for k in keys {
            let Some(val) = obj.get(k) else { continue };
            let found = props.is_some_and(|p| p.contains_key(k));
            let mut pp_match = false;
            for (re, sch) in &patterns {
                if re.is_match(k) {
                    pp_match = true;
                    self.depth += 1;
                    self.validate(sch, val, &format!("{ctx}.{k}"));
                    self.depth -= 1;
                }
            }
            if !found && !pp_match {
                match s.get("additionalProperties") {
                    Some(J::Bool(false)) => {
                        self.err(ctx, format!("Additional property {k} is not allowed"))
                    }
                    Some(sch @ J::Object(_)) => {
                        self.depth += 1;
                        self.validate(sch, val, &format!("{ctx}.{k}"));
                        self.depth -= 1;
                    }
                    _ => {}
                }
            }
        }
        if let Some(pn) = s.get("propertyNames") {
            for k in obj.keys() {
                let errs = self.sub(pn, &J::String(k.clone()), ctx);
                self.errors.extend(errs);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::helm::values::parse_values_text;

    fn check(schema: &str, values: &str) -> Result<(), String> {
        let v = Value::map(parse_values_text(values, None).unwrap_or_default().map);
        validate_text(schema, &v)
    }

    #[test]
    fn helm_error_texts() {
        let schema = r#"{"type":"object","required":["employmentInfo"],"properties":{"age":{"type":"integer","minimum":0}},"additionalProperties":false}"#;
        assert_eq!(
            check(schema, "age: -5\nlogs: 1\n"),
            Err("- (root): employmentInfo is required\n- (root): Additional property logs is not allowed\n- age: Must be greater than or equal to 0\n".into())
        );
        assert_eq!(
            check(r#"{"properties":{"a":{"type":"string"}}}"#, "a: 1\n"),
            Err("- a: Invalid type. Expected: string, given: integer\n".into())
        );
        assert_eq!(
            check(r#"{"properties":{"a":{"enum":["x","y"]}}}"#, "a: z\n"),
            Err("- a: a must be one of the following: \"x\", \"y\"\n".into())
        );
        assert!(check(r##"{"definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s"}}}"##, "a: b\n").is_ok());
    }
}
