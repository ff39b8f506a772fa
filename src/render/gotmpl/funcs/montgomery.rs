//! Modular exponentiation in Montgomery form over 64-bit limbs, for the Miller-Rabin tests
//! of RSA key generation (`primes.rs`). num-bigint-dig's generic `modpow` made one 2048-bit
//! key cost about half a second; a fixed-size CIOS loop on reused buffers is ~10× faster.
//!
//! Numbers are little-endian `u64` limbs, all of the modulus' length. Not constant-time: the
//! primes are candidates being searched, and the keys are test fixtures a chart prints into
//! its manifests (the linter taints them as non-deterministic), not secrets to protect.

/// An odd modulus with what Montgomery multiplication needs (R = 2^(64·len)).
pub struct Modulus {
    n: Vec<u64>,
    /// -n⁻¹ mod 2^64.
    n_inv: u64,
    /// R mod n: the Montgomery form of 1.
    one: Vec<u64>,
    /// R² mod n: converts into Montgomery form.
    r2: Vec<u64>,
}

impl Modulus {
    /// `None` unless `n` is odd and greater than 1 (its top limb may be zero).
    pub fn new(n: &[u64]) -> Option<Modulus> {
        if n.first().is_none_or(|l| l & 1 == 0) || (n.len() == 1 && n[0] == 1) {
            return None;
        }
        // Newton's iteration doubles the correct low bits each step: 1 → 64 in 6 steps.
        let mut inv: u64 = 1;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(n[0].wrapping_mul(inv)));
        }
        // R mod n: from 2^(b-1) < n (n odd with b bits), double up to 2^(64·len); a
        // modulus that fills its limbs needs one doubling.
        let bits = 64 * n.len();
        let b = bit_len(n);
        let mut one = vec![0u64; n.len()];
        one[(b - 1) / 64] = 1 << ((b - 1) % 64);
        for _ in b - 1..bits {
            double_mod(&mut one, n);
        }
        let mut m = Modulus {
            n: n.to_vec(),
            n_inv: inv.wrapping_neg(),
            one,
            r2: Vec::new(),
        };
        m.r2 = m.pow2(&[bits as u64]);
        Some(m)
    }

    pub fn len(&self) -> usize {
        self.n.len()
    }

    pub fn modulus(&self) -> &[u64] {
        &self.n
    }

    /// Montgomery form of 1 (R mod n).
    pub fn one(&self) -> &[u64] {
        &self.one
    }

    /// Scratch space for `mul` and `sqr` (`len + 2` limbs).
    pub fn scratch(&self) -> Vec<u64> {
        vec![0u64; self.len() + 2]
    }

    /// `a·b·R⁻¹ mod n` into `out` (a, b < n). `t` is scratch of `len + 2` limbs.
    pub fn mul(&self, a: &[u64], b: &[u64], out: &mut [u64], t: &mut [u64]) {
        // The sizes of 2048- and 4096-bit keys' primes get loops of known length.
        match self.n.len() {
            16 => self.mul_k::<16>(a, b, out),
            32 => self.mul_k::<32>(a, b, out),
            _ => self.mul_any(a, b, out, t),
        }
    }

    /// `a²·R⁻¹ mod n` into `out` (a < n; `t`: `scratch()`). The multiplication's loops:
    /// a separate squaring (cross products once, then reduction) has a quarter fewer word
    /// multiplications but measured ~10% slower for 16 limbs (its rows vary in length and
    /// are not unrolled, and the 2·len-limb product goes through memory).
    pub fn sqr(&self, a: &[u64], out: &mut [u64], t: &mut [u64]) {
        self.mul(a, a, out, t);
    }

    /// `mul` for K-limb moduli, on the stack (the caller checked the length).
    fn mul_k<const K: usize>(&self, a: &[u64], b: &[u64], out: &mut [u64]) {
        let (Ok(n), Ok(a), Ok(b)) = (
            <&[u64; K]>::try_from(&self.n[..]),
            <&[u64; K]>::try_from(&a[..K]),
            <&[u64; K]>::try_from(&b[..K]),
        ) else {
            return;
        };
        let mut acc = [0u64; K];
        let mut top = 0u64;
        for &bi in b {
            // acc += a·b[i]
            let mut carry = 0u64;
            for j in 0..K {
                let s = acc[j] as u128 + a[j] as u128 * bi as u128 + carry as u128;
                acc[j] = s as u64;
                carry = (s >> 64) as u64;
            }
            let s = top as u128 + carry as u128;
            let (t_k, t_k1) = (s as u64, (s >> 64) as u64);
            // acc = (acc + m·n) / 2^64, with m chosen so the low limb cancels.
            let m = acc[0].wrapping_mul(self.n_inv);
            let s = acc[0] as u128 + m as u128 * n[0] as u128;
            let mut carry = (s >> 64) as u64;
            for j in 1..K {
                let s = acc[j] as u128 + m as u128 * n[j] as u128 + carry as u128;
                acc[j - 1] = s as u64;
                carry = (s >> 64) as u64;
            }
            let s = t_k as u128 + carry as u128;
            acc[K - 1] = s as u64;
            top = t_k1 + (s >> 64) as u64;
        }
        // acc < 2n: one conditional subtraction.
        if top != 0 || !less(&acc, n) {
            sub_in_place(&mut acc, n);
        }
        out[..K].copy_from_slice(&acc);
    }

    fn mul_any(&self, a: &[u64], b: &[u64], out: &mut [u64], t: &mut [u64]) {
        let k = self.n.len();
        // Equal-length slices let the compiler drop the bounds checks in the inner loops.
        let (n, a, b, t) = (&self.n[..k], &a[..k], &b[..k], &mut t[..k + 2]);
        t.fill(0);
        for &bi in b {
            // t += a·b[i]
            let mut carry = 0u64;
            for (tj, &aj) in t[..k].iter_mut().zip(a) {
                let s = *tj as u128 + aj as u128 * bi as u128 + carry as u128;
                *tj = s as u64;
                carry = (s >> 64) as u64;
            }
            let s = t[k] as u128 + carry as u128;
            t[k] = s as u64;
            t[k + 1] = (s >> 64) as u64;
            // t = (t + m·n) / 2^64, with m chosen so the low limb cancels.
            let m = t[0].wrapping_mul(self.n_inv);
            let s = t[0] as u128 + m as u128 * n[0] as u128;
            let mut carry = (s >> 64) as u64;
            for j in 1..k {
                let s = t[j] as u128 + m as u128 * n[j] as u128 + carry as u128;
                t[j - 1] = s as u64;
                carry = (s >> 64) as u64;
            }
            let s = t[k] as u128 + carry as u128;
            t[k - 1] = s as u64;
            t[k] = t[k + 1] + (s >> 64) as u64;
        }
        // t < 2n: one conditional subtraction.
        if t[k] != 0 || !less(&t[..k], n) {
            sub_in_place(&mut t[..k], n);
        }
        out[..k].copy_from_slice(&t[..k]);
    }

    /// Montgomery form of `x` (x < n).
    pub fn to_mont(&self, x: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; self.len()];
        self.mul(x, &self.r2, &mut out, &mut self.scratch());
        out
    }

    /// `base^exp` with base and result in Montgomery form; `exp` is little-endian limbs.
    /// Left-to-right sliding windows of up to 5 bits over a table of the 16 odd powers
    /// base¹..base³¹: about one multiplication per 6 squarings.
    pub fn pow(&self, base: &[u64], exp: &[u64]) -> Vec<u64> {
        const WIDTH: usize = 5;
        let k = self.len();
        let mut t = self.scratch();
        let mut base_sq = vec![0u64; k];
        self.sqr(base, &mut base_sq, &mut t);
        let mut odd_powers = vec![base.to_vec()];
        for i in 1..1 << (WIDTH - 1) {
            let mut next = vec![0u64; k];
            self.mul(&odd_powers[i - 1], &base_sq, &mut next, &mut t);
            odd_powers.push(next);
        }
        let mut acc = self.one.clone();
        let mut tmp = vec![0u64; k];
        let mut started = false;
        let mut top = bit_len(exp);
        while top > 0 {
            let i = top - 1;
            if !bit(exp, i) {
                if started {
                    self.sqr(&acc, &mut tmp, &mut t);
                    std::mem::swap(&mut acc, &mut tmp);
                }
                top = i;
                continue;
            }
            // The window i..=low: at most WIDTH bits, ending on a set bit (an odd value).
            let mut low = i.saturating_sub(WIDTH - 1);
            while !bit(exp, low) {
                low += 1;
            }
            let window = (low..=i)
                .rev()
                .fold(0usize, |v, j| (v << 1) | bit(exp, j) as usize);
            if started {
                for _ in low..=i {
                    self.sqr(&acc, &mut tmp, &mut t);
                    std::mem::swap(&mut acc, &mut tmp);
                }
                self.mul(&acc, &odd_powers[window >> 1], &mut tmp, &mut t);
                std::mem::swap(&mut acc, &mut tmp);
            } else {
                acc.copy_from_slice(&odd_powers[window >> 1]);
                started = true;
            }
            top = low;
        }
        acc
    }

    /// Montgomery form of `2^exp`: square, and double (a shift and a subtraction) for each
    /// set bit, in place of multiplications by a table. Miller-Rabin's base-2 round.
    pub fn pow2(&self, exp: &[u64]) -> Vec<u64> {
        let mut acc = self.one.clone();
        let top = bit_len(exp);
        if top == 0 {
            return acc;
        }
        let (mut tmp, mut t) = (vec![0u64; self.len()], self.scratch());
        double_mod(&mut acc, &self.n);
        for i in (0..top - 1).rev() {
            self.sqr(&acc, &mut tmp, &mut t);
            std::mem::swap(&mut acc, &mut tmp);
            if bit(exp, i) {
                double_mod(&mut acc, &self.n);
            }
        }
        acc
    }

    /// One squaring in Montgomery form, in place (`t`: `scratch()`).
    pub fn square(&self, x: &mut Vec<u64>, tmp: &mut Vec<u64>, t: &mut [u64]) {
        self.sqr(x, tmp, t);
        std::mem::swap(x, tmp);
    }
}

fn bit(x: &[u64], i: usize) -> bool {
    x.get(i / 64).is_some_and(|l| (l >> (i % 64)) & 1 == 1)
}

/// Bits up to the highest set one (0 for zero).
pub fn bit_len(x: &[u64]) -> usize {
    x.iter()
        .rposition(|l| *l != 0)
        .map_or(0, |i| 64 * i + 64 - x[i].leading_zeros() as usize)
}

/// a < b, equal lengths.
pub fn less(a: &[u64], b: &[u64]) -> bool {
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        if x != y {
            return x < y;
        }
    }
    false
}

/// a -= b (a ≥ b as numbers; a borrow out of the top is dropped).
pub fn sub_in_place(a: &mut [u64], b: &[u64]) {
    let mut borrow = false;
    for (x, y) in a.iter_mut().zip(b) {
        let (d1, b1) = x.overflowing_sub(*y);
        let (d2, b2) = d1.overflowing_sub(borrow as u64);
        *x = d2;
        borrow = b1 || b2;
    }
}

/// x = 2x mod n (x < n).
fn double_mod(x: &mut [u64], n: &[u64]) {
    let mut carry = 0u64;
    for l in x.iter_mut() {
        let next = *l >> 63;
        *l = (*l << 1) | carry;
        carry = next;
    }
    if carry != 0 || !less(x, n) {
        sub_in_place(x, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::BigUint;

    fn limbs(x: &BigUint, len: usize) -> Vec<u64> {
        let mut out = vec![0u64; len];
        for (i, chunk) in x.to_bytes_le().chunks(8).enumerate() {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            out[i] = u64::from_le_bytes(b);
        }
        out
    }

    fn big(l: &[u64]) -> BigUint {
        let bytes: Vec<u8> = l.iter().flat_map(|x| x.to_le_bytes()).collect();
        BigUint::from_bytes_le(&bytes)
    }

    /// Deterministic pseudo-random limbs (splitmix64).
    fn random_limbs(seed: &mut u64, len: usize) -> Vec<u64> {
        (0..len)
            .map(|_| {
                *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = *seed;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^ (z >> 31)
            })
            .collect()
    }

    #[test]
    fn rejects_even_and_trivial_moduli() {
        assert!(Modulus::new(&[]).is_none());
        assert!(Modulus::new(&[4, 1]).is_none());
        assert!(Modulus::new(&[1]).is_none());
        assert!(Modulus::new(&[3]).is_some());
    }

    #[test]
    fn pow_matches_a_reference_bignum() {
        let mut seed = 7;
        for len in LENGTHS {
            for round in 0..6 {
                let mut n = random_limbs(&mut seed, len);
                n[0] |= 1;
                if round % 2 == 0 {
                    // Also a modulus that does not fill its top limb.
                    n[len - 1] >>= 17;
                }
                let Some(m) = Modulus::new(&n) else {
                    continue;
                };
                let nb = big(&n);
                let base = big(&random_limbs(&mut seed, len)) % &nb;
                let exp_l = random_limbs(&mut seed, len);
                let got = m.pow(&m.to_mont(&limbs(&base, len)), &exp_l);
                // Out of Montgomery form: multiply by plain 1.
                let mut one = vec![0u64; len];
                one[0] = 1;
                let (mut out, mut t) = (vec![0u64; len], m.scratch());
                m.mul(&got, &one, &mut out, &mut t);
                assert_eq!(
                    big(&out),
                    base.modpow(&big(&exp_l), &nb),
                    "len {len} round {round}"
                );
            }
        }
    }

    /// Random odd moduli of `len` limbs, every other one not filling its top limb.
    fn random_moduli(seed: &mut u64, len: usize, count: usize) -> Vec<(Modulus, BigUint)> {
        (0..count)
            .filter_map(|round| {
                let mut n = random_limbs(seed, len);
                n[0] |= 1;
                if round % 2 == 1 {
                    n[len - 1] >>= 1 + round % 60;
                }
                Some((Modulus::new(&n)?, big(&n)))
            })
            .collect()
    }

    /// Lengths of the generic loops and of both fixed-size specialisations (16, 32).
    const LENGTHS: [usize; 7] = [1, 2, 3, 5, 16, 17, 32];

    #[test]
    fn setup_constants_match_a_reference_bignum() {
        let mut seed = 11;
        for len in LENGTHS {
            for (m, nb) in random_moduli(&mut seed, len, 6) {
                let r = BigUint::from(1u32) << (64 * len);
                assert_eq!(big(m.one()), &r % &nb, "R mod n, len {len}");
                assert_eq!(big(&m.r2), (&r * &r) % &nb, "R² mod n, len {len}");
            }
        }
    }

    #[test]
    fn mul_and_sqr_match_a_reference_bignum() {
        let mut seed = 3;
        for len in LENGTHS {
            for (m, nb) in random_moduli(&mut seed, len, 6) {
                // out = x·y·R⁻¹ mod n exactly when out·R ≡ x·y (mod n), as R is invertible.
                let r = BigUint::from(1u32) << (64 * len);
                let mut t = m.scratch();
                for _ in 0..4 {
                    let a = big(&random_limbs(&mut seed, len)) % &nb;
                    let b = big(&random_limbs(&mut seed, len)) % &nb;
                    let (al, bl) = (limbs(&a, len), limbs(&b, len));
                    let mut out = vec![0u64; len];
                    m.mul(&al, &bl, &mut out, &mut t);
                    assert_eq!((big(&out) * &r) % &nb, (&a * &b) % &nb, "mul len {len}");
                    assert!(big(&out) < nb);
                    m.sqr(&al, &mut out, &mut t);
                    assert_eq!((big(&out) * &r) % &nb, (&a * &a) % &nb, "sqr len {len}");
                    assert!(big(&out) < nb);
                }
                // The largest operand, n - 1, carries through every limb.
                let top = limbs(&(&nb - 1u32), len);
                let mut out = vec![0u64; len];
                m.sqr(&top, &mut out, &mut t);
                assert_eq!(
                    (big(&out) * &r) % &nb,
                    BigUint::from(1u32) % &nb,
                    "(n-1)², len {len}"
                );
            }
        }
    }

    #[test]
    fn pow2_matches_a_reference_bignum() {
        let mut seed = 5;
        for len in LENGTHS {
            for (m, nb) in random_moduli(&mut seed, len, 4) {
                let exp_l = random_limbs(&mut seed, len);
                let got = m.pow2(&exp_l);
                let mut one = vec![0u64; len];
                one[0] = 1;
                let (mut out, mut t) = (vec![0u64; len], m.scratch());
                m.mul(&got, &one, &mut out, &mut t);
                assert_eq!(
                    big(&out),
                    BigUint::from(2u32).modpow(&big(&exp_l), &nb),
                    "len {len}"
                );
            }
        }
    }

    #[test]
    fn zero_exponent_is_one() {
        let m = Modulus::new(&[0xffff_ffff_ffff_ffc5]).unwrap();
        let b = m.to_mont(&[12345]);
        assert_eq!(m.pow(&b, &[0]), m.one());
        assert_eq!(m.pow2(&[0]), m.one());
    }
}
