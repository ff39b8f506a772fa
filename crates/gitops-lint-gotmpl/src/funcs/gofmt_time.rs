//! Go's `time` package as templates use it: reference-time layouts ("2006-01-02 15:04:05"),
//! Time.String, Duration.String and time.ParseDuration. Civil-date arithmetic is done here
//! (days from the epoch ↔ y/m/d) so no calendar crate is needed.

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// An instant plus the zone it is shown in (Go's time.Time with a fixed-offset Location).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoTime {
    /// Seconds since the Unix epoch.
    pub secs: i64,
    /// Nanoseconds within the second (0..1e9).
    pub nanos: u32,
    /// Offset east of UTC in seconds.
    pub offset: i32,
    /// Zone abbreviation ("UTC", or "" for an unnamed fixed zone).
    pub zone: String,
}

/// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if is_leap(y) {
                29
            } else {
                28
            }
        }
    }
}

/// Broken-down local time.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    yday: u32,
    wday: usize,
    hour: u32,
    min: u32,
    sec: u32,
}

fn civil(t: &GoTime) -> Civil {
    let local = t.secs.saturating_add(i64::from(t.offset));
    let days = local.div_euclid(86_400);
    let rem = local.rem_euclid(86_400) as u32;
    let (year, month, day) = civil_from_days(days);
    let yday = (days - days_from_civil(year, 1, 1)) as u32 + 1;
    Civil {
        year,
        month,
        day,
        yday,
        wday: (days + 4).rem_euclid(7) as usize,
        hour: rem / 3600,
        min: rem / 60 % 60,
        sec: rem % 60,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    PM,
    Pm,
    TZ,
    Iso8601TZ,
    Iso8601SecondsTZ,
    Iso8601ShortTZ,
    Iso8601ColonTZ,
    Iso8601ColonSecondsTZ,
    NumTZ,
    NumSecondsTz,
    NumShortTZ,
    NumColonTZ,
    NumColonSecondsTZ,
    /// Fixed (`.000`) or trimmed (`.999`) fraction: digits, separator.
    Frac0(usize, char),
    Frac9(usize, char),
}

fn starts_lower(s: &str) -> bool {
    s.as_bytes().first().is_some_and(|c| c.is_ascii_lowercase())
}

/// Go's nextStdChunk: (prefix, std, suffix).
fn next_std(layout: &str) -> (&str, Option<Std>, &str) {
    let b = layout.as_bytes();
    let has = |i: usize, s: &str| layout.get(i..i + s.len()) == Some(s);
    for i in 0..b.len() {
        let found: Option<(Std, usize)> = match b[i] {
            b'J' if has(i, "Jan") => {
                if has(i, "January") {
                    Some((Std::LongMonth, 7))
                } else if !starts_lower(&layout[i + 3..]) {
                    Some((Std::Month, 3))
                } else {
                    None
                }
            }
            b'M' if has(i, "Mon") => {
                if has(i, "Monday") {
                    Some((Std::LongWeekDay, 6))
                } else if !starts_lower(&layout[i + 3..]) {
                    Some((Std::WeekDay, 3))
                } else {
                    None
                }
            }
            b'M' if has(i, "MST") => Some((Std::TZ, 3)),
            b'0' if i + 1 < b.len() && (b'1'..=b'6').contains(&b[i + 1]) => Some((
                [
                    Std::ZeroMonth,
                    Std::ZeroDay,
                    Std::ZeroHour12,
                    Std::ZeroMinute,
                    Std::ZeroSecond,
                    Std::Year,
                ][(b[i + 1] - b'1') as usize],
                2,
            )),
            b'0' if has(i, "002") => Some((Std::ZeroYearDay, 3)),
            b'1' => {
                if has(i, "15") {
                    Some((Std::Hour, 2))
                } else {
                    Some((Std::NumMonth, 1))
                }
            }
            b'2' => {
                if has(i, "2006") {
                    Some((Std::LongYear, 4))
                } else {
                    Some((Std::Day, 1))
                }
            }
            b'_' if has(i, "_2") => {
                if has(i, "_2006") {
                    // "_" is literal before a year.
                    return (&layout[..i + 1], Some(Std::LongYear), &layout[i + 5..]);
                }
                Some((Std::UnderDay, 2))
            }
            b'_' if has(i, "__2") => Some((Std::UnderYearDay, 3)),
            b'3' => Some((Std::Hour12, 1)),
            b'4' => Some((Std::Minute, 1)),
            b'5' => Some((Std::Second, 1)),
            b'P' if has(i, "PM") => Some((Std::PM, 2)),
            b'p' if has(i, "pm") => Some((Std::Pm, 2)),
            b'-' => {
                if has(i, "-070000") {
                    Some((Std::NumSecondsTz, 7))
                } else if has(i, "-07:00:00") {
                    Some((Std::NumColonSecondsTZ, 9))
                } else if has(i, "-0700") {
                    Some((Std::NumTZ, 5))
                } else if has(i, "-07:00") {
                    Some((Std::NumColonTZ, 6))
                } else if has(i, "-07") {
                    Some((Std::NumShortTZ, 3))
                } else {
                    None
                }
            }
            b'Z' => {
                if has(i, "Z070000") {
                    Some((Std::Iso8601SecondsTZ, 7))
                } else if has(i, "Z07:00:00") {
                    Some((Std::Iso8601ColonSecondsTZ, 9))
                } else if has(i, "Z0700") {
                    Some((Std::Iso8601TZ, 5))
                } else if has(i, "Z07:00") {
                    Some((Std::Iso8601ColonTZ, 6))
                } else if has(i, "Z07") {
                    Some((Std::Iso8601ShortTZ, 3))
                } else {
                    None
                }
            }
            b'.' | b',' if i + 1 < b.len() && (b[i + 1] == b'0' || b[i + 1] == b'9') => {
                let ch = b[i + 1];
                let mut j = i + 1;
                while j < b.len() && b[j] == ch {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    None
                } else {
                    let n = j - (i + 1);
                    let sep = b[i] as char;
                    Some((
                        if ch == b'0' {
                            Std::Frac0(n, sep)
                        } else {
                            Std::Frac9(n, sep)
                        },
                        j - i,
                    ))
                }
            }
            _ => None,
        };
        if let Some((std, len)) = found {
            return (&layout[..i], Some(std), &layout[i + len..]);
        }
    }
    (layout, None, "")
}

fn pad(n: i64, width: usize) -> String {
    if n < 0 {
        return format!("-{:0width$}", -n, width = width);
    }
    format!("{n:0width$}")
}

fn write_offset(out: &mut String, offset: i32, colon: bool, seconds: bool, short: bool, z: bool) {
    if z && offset == 0 {
        out.push('Z');
        return;
    }
    let mut zone = offset / 60;
    let abs_secs = offset.unsigned_abs() % 60;
    if zone < 0 {
        out.push('-');
        zone = -zone;
    } else {
        out.push('+');
    }
    out.push_str(&format!("{:02}", zone / 60));
    if short {
        return;
    }
    if colon {
        out.push(':');
    }
    out.push_str(&format!("{:02}", zone % 60));
    if seconds {
        if colon {
            out.push(':');
        }
        out.push_str(&format!("{abs_secs:02}"));
    }
}

/// time.Time.Format.
pub fn format(t: &GoTime, layout: &str) -> String {
    let c = civil(t);
    let mut out = String::new();
    let mut rest = layout;
    loop {
        let (prefix, std, suffix) = next_std(rest);
        out.push_str(prefix);
        let Some(std) = std else { break };
        rest = suffix;
        match std {
            Std::Year => out.push_str(&format!("{:02}", c.year.rem_euclid(100))),
            Std::LongYear => out.push_str(&pad(c.year, 4)),
            Std::Month => out.push_str(&MONTHS[(c.month - 1) as usize][..3]),
            Std::LongMonth => out.push_str(MONTHS[(c.month - 1) as usize]),
            Std::NumMonth => out.push_str(&c.month.to_string()),
            Std::ZeroMonth => out.push_str(&format!("{:02}", c.month)),
            Std::WeekDay => out.push_str(&DAYS[c.wday][..3]),
            Std::LongWeekDay => out.push_str(DAYS[c.wday]),
            Std::Day => out.push_str(&c.day.to_string()),
            Std::UnderDay => out.push_str(&format!("{:>2}", c.day)),
            Std::ZeroDay => out.push_str(&format!("{:02}", c.day)),
            Std::UnderYearDay => out.push_str(&format!("{:>3}", c.yday)),
            Std::ZeroYearDay => out.push_str(&format!("{:03}", c.yday)),
            Std::Hour => out.push_str(&format!("{:02}", c.hour)),
            Std::Hour12 | Std::ZeroHour12 => {
                let h = match c.hour % 12 {
                    0 => 12,
                    h => h,
                };
                if std == Std::Hour12 {
                    out.push_str(&h.to_string());
                } else {
                    out.push_str(&format!("{h:02}"));
                }
            }
            Std::Minute => out.push_str(&c.min.to_string()),
            Std::ZeroMinute => out.push_str(&format!("{:02}", c.min)),
            Std::Second => out.push_str(&c.sec.to_string()),
            Std::ZeroSecond => out.push_str(&format!("{:02}", c.sec)),
            Std::PM => out.push_str(if c.hour >= 12 { "PM" } else { "AM" }),
            Std::Pm => out.push_str(if c.hour >= 12 { "pm" } else { "am" }),
            Std::TZ => {
                if t.zone.is_empty() {
                    write_offset(&mut out, t.offset, false, false, false, false);
                } else {
                    out.push_str(&t.zone);
                }
            }
            Std::Iso8601TZ => write_offset(&mut out, t.offset, false, false, false, true),
            Std::Iso8601SecondsTZ => write_offset(&mut out, t.offset, false, true, false, true),
            Std::Iso8601ShortTZ => write_offset(&mut out, t.offset, false, false, true, true),
            Std::Iso8601ColonTZ => write_offset(&mut out, t.offset, true, false, false, true),
            Std::Iso8601ColonSecondsTZ => write_offset(&mut out, t.offset, true, true, false, true),
            Std::NumTZ => write_offset(&mut out, t.offset, false, false, false, false),
            Std::NumSecondsTz => write_offset(&mut out, t.offset, false, true, false, false),
            Std::NumShortTZ => write_offset(&mut out, t.offset, false, false, true, false),
            Std::NumColonTZ => write_offset(&mut out, t.offset, true, false, false, false),
            Std::NumColonSecondsTZ => write_offset(&mut out, t.offset, true, true, false, false),
            Std::Frac0(n, sep) => {
                let digits = format!("{:09}", t.nanos);
                out.push(sep);
                out.push_str(&digits[..n.min(9)]);
            }
            Std::Frac9(n, sep) => {
                let digits = format!("{:09}", t.nanos);
                let d = digits[..n.min(9)].trim_end_matches('0');
                if !d.is_empty() {
                    out.push(sep);
                    out.push_str(d);
                }
            }
        }
    }
    out
}

/// Time.String: "2006-01-02 15:04:05.999999999 -0700 MST".
pub fn time_string(t: &GoTime) -> String {
    format(t, "2006-01-02 15:04:05.999999999 -0700 MST")
}

fn take_num(s: &str, min: usize, max: usize) -> Option<(i64, &str)> {
    let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if n < min {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

fn take_name<'a>(s: &'a str, names: &[&str], len: Option<usize>) -> Option<(usize, &'a str)> {
    for (i, n) in names.iter().enumerate() {
        let n = match len {
            Some(l) => &n[..l],
            None => n,
        };
        if s.len() >= n.len() && s[..n.len()].eq_ignore_ascii_case(n) {
            return Some((i, &s[n.len()..]));
        }
    }
    None
}

/// time.ParseInLocation with a fixed-offset location (`local_offset` applies when the
/// layout carries no zone).
pub fn parse(
    layout: &str,
    value: &str,
    local_offset: i32,
    local_zone: &str,
) -> Result<GoTime, String> {
    let err = |what: &str, rest: &str| {
        format!("parsing time {value:?} as {layout:?}: cannot parse {rest:?} as {what:?}")
    };
    let (mut year, mut month, mut day, mut hour, mut min, mut sec) =
        (1i64, 1u32, 1u32, 0u32, 0u32, 0u32);
    let mut nanos = 0u32;
    let mut pm: Option<bool> = None;
    let mut offset: Option<i32> = None;
    let mut zone_name = String::new();
    let mut lay = layout;
    let mut v = value;
    loop {
        let (prefix, std, suffix) = next_std(lay);
        let Some(rest) = v.strip_prefix(prefix) else {
            return Err(err(prefix, v));
        };
        v = rest;
        let Some(std) = std else {
            if !v.is_empty() {
                return Err(format!("parsing time {value:?}: extra text: {v:?}"));
            }
            break;
        };
        let std_text = &lay[prefix.len()..lay.len() - suffix.len()];
        lay = suffix;
        let bad = || err(std_text, v);
        match std {
            Std::LongYear => {
                let (n, r) = take_num(v, 4, 4).ok_or_else(bad)?;
                year = n;
                v = r;
            }
            Std::Year => {
                let (n, r) = take_num(v, 2, 2).ok_or_else(bad)?;
                year = if n >= 69 { 1900 + n } else { 2000 + n };
                v = r;
            }
            Std::Month | Std::LongMonth => {
                let l = if std == Std::Month { Some(3) } else { None };
                let (i, r) = take_name(v, &MONTHS, l).ok_or_else(bad)?;
                month = i as u32 + 1;
                v = r;
            }
            Std::NumMonth | Std::ZeroMonth => {
                let min = if std == Std::ZeroMonth { 2 } else { 1 };
                let (n, r) = take_num(v, min, 2).ok_or_else(bad)?;
                month = n as u32;
                v = r;
            }
            Std::WeekDay | Std::LongWeekDay => {
                let l = if std == Std::WeekDay { Some(3) } else { None };
                let (_, r) = take_name(v, &DAYS, l).ok_or_else(bad)?;
                v = r;
            }
            Std::Day | Std::UnderDay | Std::ZeroDay => {
                if std == Std::UnderDay {
                    v = v.strip_prefix(' ').unwrap_or(v);
                }
                let min = if std == Std::ZeroDay { 2 } else { 1 };
                let (n, r) = take_num(v, min, 2).ok_or_else(bad)?;
                day = n as u32;
                v = r;
            }
            Std::UnderYearDay | Std::ZeroYearDay => {
                let (_, r) = take_num(v.trim_start(), 1, 3).ok_or_else(bad)?;
                v = r;
            }
            Std::Hour => {
                let (n, r) = take_num(v, 1, 2).ok_or_else(bad)?;
                hour = n as u32;
                v = r;
            }
            Std::Hour12 | Std::ZeroHour12 => {
                let (n, r) = take_num(v, 1, 2).ok_or_else(bad)?;
                hour = n as u32;
                v = r;
            }
            Std::Minute | Std::ZeroMinute => {
                let (n, r) = take_num(v, 1, 2).ok_or_else(bad)?;
                min = n as u32;
                v = r;
            }
            Std::Second | Std::ZeroSecond => {
                let (n, r) = take_num(v, 1, 2).ok_or_else(bad)?;
                sec = n as u32;
                v = r;
                // A fraction may follow even if the layout has none.
                if (v.starts_with('.') || v.starts_with(','))
                    && v[1..].starts_with(|c: char| c.is_ascii_digit())
                    && !matches!(next_std(lay).1, Some(Std::Frac0(..) | Std::Frac9(..)))
                {
                    let n = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                    nanos = frac_nanos(&v[1..1 + n]);
                    v = &v[1 + n..];
                }
            }
            Std::PM | Std::Pm => {
                let w = v.get(..2).ok_or_else(bad)?;
                pm = match w.to_ascii_uppercase().as_str() {
                    "PM" => Some(true),
                    "AM" => Some(false),
                    _ => return Err(bad()),
                };
                v = &v[2..];
            }
            Std::Frac0(n, _) | Std::Frac9(n, _) => {
                if !v.starts_with(['.', ',']) {
                    if matches!(std, Std::Frac9(..)) {
                        continue;
                    }
                    return Err(bad());
                }
                let digits = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                if matches!(std, Std::Frac0(..)) && digits != n {
                    return Err(bad());
                }
                nanos = frac_nanos(&v[1..1 + digits]);
                v = &v[1 + digits..];
            }
            Std::TZ => {
                if let Some(r) = v.strip_prefix("UTC") {
                    offset = Some(0);
                    zone_name = "UTC".into();
                    v = r;
                } else {
                    let n = v.bytes().take_while(u8::is_ascii_uppercase).count();
                    if n < 3 {
                        return Err(bad());
                    }
                    zone_name = v[..n].to_string();
                    v = &v[n..];
                }
            }
            _ => {
                // numeric zone variants
                if matches!(
                    std,
                    Std::Iso8601TZ
                        | Std::Iso8601SecondsTZ
                        | Std::Iso8601ShortTZ
                        | Std::Iso8601ColonTZ
                        | Std::Iso8601ColonSecondsTZ
                ) && let Some(r) = v.strip_prefix('Z')
                {
                    offset = Some(0);
                    zone_name = "UTC".into();
                    v = r;
                    continue;
                }
                let sign = match v.as_bytes().first() {
                    Some(b'+') => 1,
                    Some(b'-') => -1,
                    _ => return Err(bad()),
                };
                let (hh, r) = take_num(&v[1..], 2, 2).ok_or_else(bad)?;
                let mut r = r;
                let mut mm = 0;
                let mut ss = 0;
                let short = matches!(std, Std::NumShortTZ | Std::Iso8601ShortTZ);
                if !short {
                    r = r.strip_prefix(':').unwrap_or(r);
                    let (m, r2) = take_num(r, 2, 2).ok_or_else(bad)?;
                    mm = m;
                    r = r2;
                    if matches!(
                        std,
                        Std::NumSecondsTz
                            | Std::NumColonSecondsTZ
                            | Std::Iso8601SecondsTZ
                            | Std::Iso8601ColonSecondsTZ
                    ) {
                        r = r.strip_prefix(':').unwrap_or(r);
                        let (s, r3) = take_num(r, 2, 2).ok_or_else(bad)?;
                        ss = s;
                        r = r3;
                    }
                }
                offset = Some(sign * (hh * 3600 + mm * 60 + ss) as i32);
                v = r;
            }
        }
    }
    if let Some(p) = pm {
        if hour > 12 {
            return Err(format!("parsing time {value:?}: hour out of range"));
        }
        if p && hour < 12 {
            hour += 12;
        } else if !p && hour == 12 {
            hour = 0;
        }
    }
    if !(1..=12).contains(&month) {
        return Err(format!("parsing time {value:?}: month out of range"));
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err(format!("parsing time {value:?}: day out of range"));
    }
    if hour > 23 || min > 59 || sec > 59 {
        return Err(format!("parsing time {value:?}: hour out of range"));
    }
    let local = days_from_civil(year, month, day) * 86_400
        + i64::from(hour) * 3600
        + i64::from(min) * 60
        + i64::from(sec);
    let (off, zone) = match offset {
        Some(o) => (
            o,
            if o == 0 && zone_name.is_empty() {
                "UTC".to_string()
            } else {
                zone_name
            },
        ),
        None if !zone_name.is_empty() => (0, zone_name),
        None => (local_offset, local_zone.to_string()),
    };
    Ok(GoTime {
        secs: local - i64::from(off),
        nanos,
        offset: off,
        zone,
    })
}

fn frac_nanos(d: &str) -> u32 {
    let mut s: String = d.chars().take(9).collect();
    while s.len() < 9 {
        s.push('0');
    }
    s.parse().unwrap_or(0)
}

/// time.Duration.String.
pub fn duration_string(d: i64) -> String {
    if d == 0 {
        return "0s".into();
    }
    let neg = d < 0;
    let u = d.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        // sub-second: ns, µs, ms with a fraction
        let (unit, scale) = if u < 1_000 {
            ("ns", 1u64)
        } else if u < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        out.push_str(&frac_str(u, scale));
        out.push_str(unit);
    } else {
        let secs_total = u / 1_000_000_000;
        let frac = u % 1_000_000_000;
        let h = secs_total / 3600;
        let m = secs_total / 60 % 60;
        let s = secs_total % 60;
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if h > 0 || m > 0 {
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&frac_str(s * 1_000_000_000 + frac, 1_000_000_000));
        out.push('s');
    }
    if neg { format!("-{out}") } else { out }
}

fn frac_str(v: u64, scale: u64) -> String {
    let int = v / scale;
    let frac = v % scale;
    if frac == 0 {
        return int.to_string();
    }
    let width = scale.ilog10() as usize;
    let f = format!("{frac:0width$}");
    format!("{int}.{}", f.trim_end_matches('0'))
}

/// time.ParseDuration.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let orig = s;
    let bad = || format!("time: invalid duration {:?}", orig);
    let (neg, mut s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(bad());
    }
    let mut total: f64 = 0.0;
    while !s.is_empty() {
        let n = s
            .bytes()
            .take_while(|c| c.is_ascii_digit() || *c == b'.')
            .count();
        if n == 0 || s[..n] == *"." {
            return Err(bad());
        }
        let num: f64 = s[..n].parse().map_err(|_| bad())?;
        s = &s[n..];
        let u = s
            .bytes()
            .take_while(|c| !c.is_ascii_digit() && *c != b'.')
            .count();
        if u == 0 {
            return Err(format!("time: missing unit in duration {:?}", orig));
        }
        let unit = &s[..u];
        s = &s[u..];
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(format!("time: unknown unit {unit:?} in duration {orig:?}")),
        };
        total += num * scale;
    }
    if total > 9.223_372_036_854_775e18 {
        return Err(bad());
    }
    let v = total.round() as i64;
    Ok(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64, offset: i32, zone: &str) -> GoTime {
        GoTime {
            secs,
            nanos: 0,
            offset,
            zone: zone.into(),
        }
    }

    #[test]
    fn formats_like_go() {
        let x = t(1_560_458_379, 0, "UTC");
        assert_eq!(format(&x, "02 Jan 06 15:04 -0700"), "13 Jun 19 20:39 +0000");
        assert_eq!(
            format(&x, "2006-01-02T15:04:05Z07:00"),
            "2019-06-13T20:39:39Z"
        );
        assert_eq!(
            format(&x, "Monday, January 2 2006 3:04PM MST"),
            "Thursday, June 13 2019 8:39PM UTC"
        );
        assert_eq!(time_string(&x), "2019-06-13 20:39:39 +0000 UTC");
        let y = t(1_560_458_379, 3600, "");
        assert_eq!(format(&y, "15:04 Z07:00 MST"), "21:39 +01:00 +0100");
    }

    #[test]
    fn parses_like_go() {
        let p = parse("2006-01-02", "2017-12-31", 0, "UTC").map(|x| x.secs);
        assert_eq!(p, Ok(1_514_678_400));
        let p = parse(
            "2006-01-02T15:04:05Z07:00",
            "2019-06-13T22:39:39+02:00",
            0,
            "UTC",
        )
        .map(|x| x.secs);
        assert_eq!(p, Ok(1_560_458_379));
        assert!(parse("2006-01-02", "2017-13-01", 0, "UTC").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(duration_string(61_000_000_000), "1m1s");
        assert_eq!(duration_string(3_600_000_000_000), "1h0m0s");
        assert_eq!(duration_string(1_500_000_000), "1.5s");
        assert_eq!(duration_string(1_500_000), "1.5ms");
        assert_eq!(duration_string(-5_000_000_000), "-5s");
        assert_eq!(parse_duration("2h5s"), Ok(7_205_000_000_000));
        assert_eq!(parse_duration("1.5h"), Ok(5_400_000_000_000));
        assert!(parse_duration("5x").is_err());
    }
}
