//! Arithmetic (Sprig functions.go/numeric.go): int64 math through cast.ToInt64, float math
//! through shopspring/decimal (so `addf 1.1 2.2` is 3.3, not 3.3000000000000003).

use super::super::value::Value;
use super::FuncEnv;
use super::args::{self, arity, arity_min, check_alloc};
use super::conv::{to_float64, to_int64};
use super::gofmt::shortest_digits;

type R = Result<Value, String>;

const DIV_ZERO: &str = "runtime error: integer divide by zero";

pub fn add1(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("add1", a, 1)?;
    Ok(Value::Int64(to_int64(&a[0]).wrapping_add(1)))
}

pub fn add(_: &mut FuncEnv, a: &[Value]) -> R {
    Ok(Value::Int64(
        a.iter().fold(0i64, |s, v| s.wrapping_add(to_int64(v))),
    ))
}

pub fn sub(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("sub", a, 2)?;
    Ok(Value::Int64(to_int64(&a[0]).wrapping_sub(to_int64(&a[1]))))
}

pub fn div(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("div", a, 2)?;
    let d = to_int64(&a[1]);
    if d == 0 {
        return Err(DIV_ZERO.into());
    }
    Ok(Value::Int64(to_int64(&a[0]).wrapping_div(d)))
}

pub fn modulo(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("mod", a, 2)?;
    let d = to_int64(&a[1]);
    if d == 0 {
        return Err(DIV_ZERO.into());
    }
    Ok(Value::Int64(to_int64(&a[0]).wrapping_rem(d)))
}

pub fn mul(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("mul", a, 1)?;
    Ok(Value::Int64(
        a[1..]
            .iter()
            .fold(to_int64(&a[0]), |s, v| s.wrapping_mul(to_int64(v))),
    ))
}

pub fn max(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("max", a, 1)?;
    Ok(Value::Int64(a.iter().map(to_int64).max().unwrap_or(0)))
}

pub fn min(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("min", a, 1)?;
    Ok(Value::Int64(a.iter().map(to_int64).min().unwrap_or(0)))
}

/// Go's math.Max / math.Min (NaN wins, +0 vs -0 ordered).
fn go_max(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 && y == 0.0 {
        return if x.is_sign_negative() { y } else { x };
    }
    x.max(y)
}

fn go_min(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 && y == 0.0 {
        return if x.is_sign_negative() { x } else { y };
    }
    x.min(y)
}

pub fn maxf(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("maxf", a, 1)?;
    Ok(Value::Float(
        a[1..]
            .iter()
            .fold(to_float64(&a[0]), |m, v| go_max(m, to_float64(v))),
    ))
}

pub fn minf(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("minf", a, 1)?;
    Ok(Value::Float(
        a[1..]
            .iter()
            .fold(to_float64(&a[0]), |m, v| go_min(m, to_float64(v))),
    ))
}

pub fn ceil(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("ceil", a, 1)?;
    Ok(Value::Float(to_float64(&a[0]).ceil()))
}

pub fn floor(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("floor", a, 1)?;
    Ok(Value::Float(to_float64(&a[0]).floor()))
}

pub fn round(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("round", a, 2)?;
    let val = to_float64(&a[0]);
    let places = args::int(&a[1])? as f64;
    let round_on = match a.get(2) {
        Some(v) => args::float(v)?,
        None => 0.5,
    };
    let pow = 10f64.powf(places);
    let digit = pow * val;
    let frac = digit.fract();
    let r = if frac >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    Ok(Value::Float(r / pow))
}

/// Sprig's untilStep: the ints from start towards stop by step (empty when step points away).
fn until_step_vec(name: &str, start: i64, stop: i64, step: i64) -> Result<Vec<i64>, String> {
    let count = if stop < start {
        if step >= 0 {
            return Ok(Vec::new());
        }
        ((start as i128 - stop as i128 - 1) / (-(step as i128)) + 1) as u128
    } else {
        if step <= 0 {
            return Ok(Vec::new());
        }
        if stop == start {
            0
        } else {
            ((stop as i128 - start as i128 - 1) / (step as i128) + 1) as u128
        }
    };
    check_alloc(name, usize::try_from(count).unwrap_or(usize::MAX))?;
    super::args::list_fits(name, count as usize)?;
    let mut v = Vec::with_capacity(count as usize);
    let mut i = start as i128;
    for _ in 0..count {
        v.push(i as i64);
        i += step as i128;
    }
    Ok(v)
}

fn int_list(v: Vec<i64>) -> Value {
    Value::list(v.into_iter().map(Value::Int).collect())
}

pub fn until(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("until", a, 1)?;
    let n = args::int(&a[0])?;
    let step = if n < 0 { -1 } else { 1 };
    Ok(int_list(until_step_vec("until", 0, n, step)?))
}

pub fn until_step(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("untilStep", a, 3)?;
    let (start, stop, step) = (args::int(&a[0])?, args::int(&a[1])?, args::int(&a[2])?);
    Ok(int_list(until_step_vec("untilStep", start, stop, step)?))
}

pub fn seq(_: &mut FuncEnv, a: &[Value]) -> R {
    let p: Vec<i64> = a.iter().map(args::int).collect::<Result<_, _>>()?;
    let v = match p.as_slice() {
        [end] => {
            let inc = if *end < 1 { -1 } else { 1 };
            until_step_vec("seq", 1, end.saturating_add(inc), inc)?
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            until_step_vec("seq", *start, end.saturating_add(step), step)?
        }
        [start, step, end] => {
            let mut inc = 1;
            if end < start {
                inc = -1;
                if *step > 0 {
                    return Ok(Value::from(""));
                }
            }
            until_step_vec("seq", *start, end.saturating_add(inc), *step)?
        }
        _ => Vec::new(),
    };
    let s: Vec<String> = v.iter().map(|i| i.to_string()).collect();
    Ok(Value::from(s.join(" ")))
}

/// A decimal m × 10^e (shopspring's representation of a float64 via NewFromFloat).
#[derive(Clone, Copy)]
struct Dec {
    m: i128,
    e: i32,
}

fn dec_from_f64(f: f64) -> Option<Dec> {
    if !f.is_finite() {
        return None;
    }
    if f == 0.0 {
        return Some(Dec { m: 0, e: 0 });
    }
    let (digits, dp) = shortest_digits(f);
    let m: i128 = digits.parse().ok()?;
    let e = dp - digits.len() as i32;
    Some(Dec {
        m: if f < 0.0 { -m } else { m },
        e,
    })
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

fn align(a: Dec, b: Dec) -> Option<(i128, i128, i32)> {
    let e = a.e.min(b.e);
    let am = a.m.checked_mul(pow10((a.e - e) as u32)?)?;
    let bm = b.m.checked_mul(pow10((b.e - e) as u32)?)?;
    Some((am, bm, e))
}

fn dec_to_f64(d: Dec) -> f64 {
    format!("{}e{}", d.m, d.e).parse().unwrap_or(0.0)
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

fn dec_op(x: f64, y: f64, op: Op) -> Result<f64, String> {
    if matches!(op, Op::Div) && y == 0.0 {
        return Err("decimal division by zero".into());
    }
    let fallback = match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div => x / y,
    };
    let (Some(a), Some(b)) = (dec_from_f64(x), dec_from_f64(y)) else {
        return Ok(fallback);
    };
    let r = match op {
        Op::Add => align(a, b).and_then(|(am, bm, e)| {
            Some(Dec {
                m: am.checked_add(bm)?,
                e,
            })
        }),
        Op::Sub => align(a, b).and_then(|(am, bm, e)| {
            Some(Dec {
                m: am.checked_sub(bm)?,
                e,
            })
        }),
        Op::Mul => a.m.checked_mul(b.m).map(|m| Dec { m, e: a.e + b.e }),
        Op::Div => dec_div(a, b),
    };
    Ok(r.map(dec_to_f64).unwrap_or(fallback))
}

/// a / b rounded half away from zero to 16 decimal places (decimal.DivisionPrecision).
fn dec_div(a: Dec, b: Dec) -> Option<Dec> {
    const PREC: i32 = 16;
    let k = a.e - b.e + PREC;
    let (num, den) = if k >= 0 {
        (a.m.checked_mul(pow10(k as u32)?)?, b.m)
    } else {
        (a.m, b.m.checked_mul(pow10((-k) as u32)?)?)
    };
    let q = num / den;
    let r = num % den;
    let q = if r.unsigned_abs() * 2 >= den.unsigned_abs() {
        if (num < 0) != (den < 0) { q - 1 } else { q + 1 }
    } else {
        q
    };
    Some(Dec { m: q, e: -PREC })
}

fn fold_dec(first: f64, rest: &[Value], op: Op) -> R {
    let mut acc = first;
    for v in rest {
        acc = dec_op(acc, to_float64(v), op)?;
    }
    Ok(Value::Float(acc))
}

pub fn add1f(_: &mut FuncEnv, a: &[Value]) -> R {
    arity("add1f", a, 1)?;
    Ok(Value::Float(dec_op(to_float64(&a[0]), 1.0, Op::Add)?))
}

pub fn addf(_: &mut FuncEnv, a: &[Value]) -> R {
    fold_dec(0.0, a, Op::Add)
}

pub fn subf(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("subf", a, 1)?;
    fold_dec(to_float64(&a[0]), &a[1..], Op::Sub)
}

pub fn mulf(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("mulf", a, 1)?;
    fold_dec(to_float64(&a[0]), &a[1..], Op::Mul)
}

pub fn divf(_: &mut FuncEnv, a: &[Value]) -> R {
    arity_min("divf", a, 1)?;
    fold_dec(to_float64(&a[0]), &a[1..], Op::Div)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_ops() {
        assert_eq!(dec_op(1.1, 2.2, Op::Add).ok(), Some(3.3));
        assert_eq!(dec_op(1.0, 3.0, Op::Div).ok(), Some(0.3333333333333333));
        assert_eq!(dec_op(2.0, 3.0, Op::Div).ok(), Some(0.6666666666666667));
        assert_eq!(dec_op(0.1, 3.0, Op::Mul).ok(), Some(0.3));
    }

    #[test]
    fn until_step_shapes() {
        assert_eq!(
            until_step_vec("untilStep", 0, 5, 2).ok(),
            Some(vec![0, 2, 4])
        );
        assert_eq!(
            until_step_vec("untilStep", 5, 0, -2).ok(),
            Some(vec![5, 3, 1])
        );
        assert_eq!(until_step_vec("untilStep", 0, 5, -1).ok(), Some(vec![]));
        assert!(until_step_vec("untilStep", 0, i64::MAX, 1).is_err());
    }
}
