//! Date functions (Sprig date.go). The clock and the local zone come from `FuncEnv`.
//!
//! Go-compatible quirks kept on purpose: `date`/`dateInZone` format *now* for anything
//! that is not a time or an int (a float64 from values files included); `duration` reads
//! only strings and int64; an unknown zone name falls back to UTC.

use std::rc::Rc;

use super::super::value::{GoObject, Value};
use super::FuncEnv;
use super::args::{self, arity};
use super::gofmt_time::{GoTime, duration_string, format, parse, parse_duration, time_string};

type R = Result<Value, String>;

impl GoObject for GoTime {
    fn type_name(&self) -> &str {
        "time.Time"
    }
    fn field(&self, name: &str) -> Option<Value> {
        let v = match name {
            "Unix" => Value::Int64(self.secs),
            "UnixNano" => Value::Int64(
                self.secs
                    .saturating_mul(1_000_000_000)
                    .saturating_add(i64::from(self.nanos)),
            ),
            "UTC" => Value::Object(Rc::new(GoTime {
                offset: 0,
                zone: "UTC".into(),
                ..self.clone()
            })),
            "String" => Value::from(time_string(self)),
            "Year" => Value::Int(format(self, "2006").parse().unwrap_or(0)),
            "YearDay" => Value::Int(format(self, "002").parse().unwrap_or(0)),
            "Day" => Value::Int(format(self, "2").parse().unwrap_or(0)),
            "Hour" => Value::Int(format(self, "15").parse().unwrap_or(0)),
            "Minute" => Value::Int(format(self, "4").parse().unwrap_or(0)),
            "Second" => Value::Int(format(self, "5").parse().unwrap_or(0)),
            "Nanosecond" => Value::Int(i64::from(self.nanos)),
            "IsZero" => Value::Bool(self.secs == ZERO_SECS && self.nanos == 0),
            _ => return None,
        };
        Some(v)
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        match (name, args) {
            ("Format", [Value::String(l)]) => Some(Ok(Value::from(format(self, l)))),
            ("Add", [Value::Int(d) | Value::Int64(d)]) => {
                Some(Ok(Value::Object(Rc::new(add(self, *d)))))
            }
            (_, []) => self.field(name).map(Ok),
            _ => None,
        }
    }
    fn format(&self) -> String {
        time_string(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Unix seconds of Go's zero time (0001-01-01 00:00:00 UTC).
const ZERO_SECS: i64 = -62_135_596_800;

fn zero_time() -> GoTime {
    GoTime {
        secs: ZERO_SECS,
        nanos: 0,
        offset: 0,
        zone: "UTC".into(),
    }
}

fn add(t: &GoTime, d: i64) -> GoTime {
    let total = i128::from(t.secs) * 1_000_000_000 + i128::from(t.nanos) + i128::from(d);
    GoTime {
        secs: total.div_euclid(1_000_000_000) as i64,
        nanos: total.rem_euclid(1_000_000_000) as u32,
        ..t.clone()
    }
}

fn local_zone(env: &mut FuncEnv) -> (i32, String) {
    let off = env.utc_offset_secs();
    (
        off,
        if off == 0 {
            "UTC".into()
        } else {
            String::new()
        },
    )
}

fn now_time(env: &mut FuncEnv) -> GoTime {
    let (offset, zone) = local_zone(env);
    let now = env.now_unix_nanos();
    GoTime {
        secs: now.div_euclid(1_000_000_000) as i64,
        nanos: now.rem_euclid(1_000_000_000) as u32,
        offset,
        zone,
    }
}

fn as_time(v: &Value) -> Option<GoTime> {
    match v {
        Value::Object(o) => o.as_any().downcast_ref::<GoTime>().cloned(),
        _ => None,
    }
}

/// A `time.Time` parameter (Go checks the static type before the call).
fn time_arg(v: &Value) -> Result<GoTime, String> {
    as_time(v).ok_or_else(|| {
        if matches!(v, Value::Nil) {
            args::unwrapped("invalid value; expected time.Time")
        } else {
            args::unwrapped(format!(
                "wrong type for value; expected time.Time; got {}",
                v.type_name()
            ))
        }
    })
}

/// time.LoadLocation + Time.In: "Local" is the env's zone, IANA names come from the
/// system's zoneinfo files (as Go reads them), anything unknown falls back to UTC.
fn in_zone(t: GoTime, zone: &str, env: &mut FuncEnv) -> GoTime {
    match zone {
        "Local" => {
            let (offset, zone) = local_zone(env);
            GoTime { offset, zone, ..t }
        }
        "" | "UTC" => GoTime {
            offset: 0,
            zone: "UTC".into(),
            ..t
        },
        name => match super::tzif::lookup(name, t.secs) {
            Some((offset, abbr)) => GoTime {
                offset,
                zone: abbr,
                ..t
            },
            None => GoTime {
                offset: 0,
                zone: "UTC".into(),
                ..t
            },
        },
    }
}

fn date_in_zone_impl(env: &mut FuncEnv, layout: &str, date: &Value, zone: &str) -> String {
    let t = match date {
        Value::Int(i) | Value::Int64(i) => GoTime {
            secs: *i,
            nanos: 0,
            offset: 0,
            zone: "UTC".into(),
        },
        other => as_time(other).unwrap_or_else(|| now_time(env)),
    };
    format(&in_zone(t, zone, env), layout)
}

pub fn date(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("date", a, 2)?;
    let layout = args::string(&a[0])?;
    Ok(Value::from(date_in_zone_impl(env, &layout, &a[1], "Local")))
}

pub fn html_date(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("htmlDate", a, 1)?;
    Ok(Value::from(date_in_zone_impl(
        env,
        "2006-01-02",
        &a[0],
        "Local",
    )))
}

pub fn date_in_zone(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("dateInZone", a, 3)?;
    let layout = args::string(&a[0])?;
    let zone = args::string(&a[2])?;
    Ok(Value::from(date_in_zone_impl(env, &layout, &a[1], &zone)))
}

pub fn html_date_in_zone(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("htmlDateInZone", a, 2)?;
    let zone = args::string(&a[1])?;
    Ok(Value::from(date_in_zone_impl(
        env,
        "2006-01-02",
        &a[0],
        &zone,
    )))
}

pub fn date_modify(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("dateModify", a, 2)?;
    let d = args::string(&a[0])?;
    let t = time_arg(&a[1])?;
    Ok(Value::Object(Rc::new(match parse_duration(&d) {
        Ok(n) => add(&t, n),
        Err(_) => t,
    })))
}

pub fn must_date_modify(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustDateModify", a, 2)?;
    let d = args::string(&a[0])?;
    let t = time_arg(&a[1])?;
    Ok(Value::Object(Rc::new(add(&t, parse_duration(&d)?))))
}

/// time.Since(t).Round(time.Second).String().
pub fn ago(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("ago", a, 1)?;
    let t = match &a[0] {
        Value::Int(i) | Value::Int64(i) => GoTime {
            secs: *i,
            nanos: 0,
            offset: 0,
            zone: "UTC".into(),
        },
        other => as_time(other).unwrap_or_else(|| now_time(env)),
    };
    let then = i128::from(t.secs) * 1_000_000_000 + i128::from(t.nanos);
    let d = env.now_unix_nanos().saturating_sub(then);
    // Round half away from zero to whole seconds.
    let s = d.saturating_abs().saturating_add(500_000_000) / 1_000_000_000 * d.signum();
    let nanos = s
        .saturating_mul(1_000_000_000)
        .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    Ok(Value::from(duration_string(nanos)))
}

pub fn duration(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("duration", a, 1)?;
    let n: i64 = match &a[0] {
        Value::String(s) => super::conv::parse_go_int(s, 10).unwrap_or(0),
        Value::Int64(i) => *i,
        _ => 0,
    };
    Ok(Value::from(duration_string(n.wrapping_mul(1_000_000_000))))
}

pub fn duration_round(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("durationRound", a, 1)?;
    let d: i64 = match &a[0] {
        Value::String(s) => parse_duration(s).unwrap_or(0),
        Value::Int64(i) => *i,
        other => match as_time(other) {
            Some(t) => {
                let then = i128::from(t.secs) * 1_000_000_000 + i128::from(t.nanos);
                env.now_unix_nanos()
                    .saturating_sub(then)
                    .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
            }
            None => 0,
        },
    };
    let u = d.unsigned_abs();
    const HOUR: u64 = 3_600_000_000_000;
    let units: [(u64, &str); 6] = [
        (HOUR * 24 * 365, "y"),
        (HOUR * 24 * 30, "mo"),
        (HOUR * 24, "d"),
        (HOUR, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
    ];
    for (size, name) in units {
        if u > size {
            return Ok(Value::from(format!("{}{name}", u / size)));
        }
    }
    Ok(Value::from("0s"))
}

pub fn to_date(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("toDate", a, 2)?;
    let layout = args::string(&a[0])?;
    let s = args::string(&a[1])?;
    let (off, zone) = local_zone(env);
    Ok(Value::Object(Rc::new(
        parse(&layout, &s, off, &zone).unwrap_or_else(|_| zero_time()),
    )))
}

pub fn must_to_date(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("mustToDate", a, 2)?;
    let layout = args::string(&a[0])?;
    let s = args::string(&a[1])?;
    let (off, zone) = local_zone(env);
    Ok(Value::Object(Rc::new(parse(&layout, &s, off, &zone)?)))
}

pub fn now(env: &mut FuncEnv, a: &[Value]) -> R {
    arity("now", a, 0)?;
    Ok(Value::Object(Rc::new(now_time(env))))
}

pub fn unix_epoch(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("unixEpoch", a, 1)?;
    Ok(Value::from(time_arg(&a[0])?.secs.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_from_env() {
        let mut e = FuncEnv::new(0, 1_560_458_379_000_000_000, 0);
        let n = now(&mut e, &[]).unwrap_or_default();
        let d = date(&mut e, &[Value::from("2006-01-02"), n]).unwrap_or_default();
        assert_eq!(d.as_str(), Some("2019-06-13"));
        let f = date(&mut e, &[Value::from("2006"), Value::Float(0.0)]).unwrap_or_default();
        assert_eq!(f.as_str(), Some("2019"));
        let dd = duration(&mut e, &[Value::from("93784")]).unwrap_or_default();
        assert_eq!(dd.as_str(), Some("26h3m4s"));
        let r = duration_round(&mut e, &[Value::from("2400h5s")]).unwrap_or_default();
        assert_eq!(r.as_str(), Some("3mo"));
        // Extreme instants must not overflow.
        let mut far = FuncEnv::new(0, i128::MAX, 3600);
        for t in [i64::MAX, i64::MIN] {
            assert!(date(&mut far, &[Value::from("2006-01-02 MST"), Value::Int64(t)]).is_ok());
            assert!(ago(&mut far, &[Value::Int64(t)]).is_ok());
        }
        assert!(now(&mut far, &[]).is_ok());
    }
}
