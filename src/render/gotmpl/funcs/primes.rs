//! Random probable primes for RSA keys (genCA, genSignedCert, genPrivateKey, ...).
//!
//! A random odd start with its top two bits set, a sieve of the window of odd numbers after
//! it by the odd primes below 2^16 (`small_primes.rs`), then Miller-Rabin on the survivors
//! in order (the first that passes is the prime; a window without one draws a new start).
//! The sieve leaves ~36 candidates to test per 1024-bit prime (~44 with primes below 2^13;
//! a bound of 2^17 or 2^18 measured no faster, as computing the remainders grows with the
//! number of primes). Each composite costs one base-2 round, the random-base rounds run only
//! on the candidate that passes it, and `montgomery.rs` makes each round fast.

use super::FuncEnv;
use super::montgomery::{Modulus, bit_len, less};
use super::small_primes::SmallPrimes;
use std::sync::OnceLock;

/// Odd primes below this bound strike candidates out before any exponentiation.
const SIEVE_LIMIT: usize = 1 << 16;
/// Odd candidates per window (start, start+2, ...): 8192 numbers, where the average gap
/// between 1024-bit primes is ~710.
const WINDOW: usize = 4096;
/// Miller-Rabin rounds with random bases after the base-2 round, by candidate size, for an
/// error probability of at most 2^-80 per prime. FIPS 186-5 Table B.1 (from the
/// Damgård-Landrock-Pomerance average-case analysis of its Appendix C.1, for random
/// candidates): 5 rounds give 2^-112 for 1024-bit primes (2048-bit keys), 4 rounds 2^-128
/// for 1536 bits and 2^-144 for 2048 bits (4096-bit keys). The margin below 2^-80 covers
/// the candidates being consecutive survivors of a sieve rather than independent draws
/// (Brandt-Damgård, incremental search). DLP's bound for 512 bits needs 6 rounds; below
/// that, 40 rounds meet 2^-80 for any odd composite (Rabin's 4^-t worst case).
fn random_rounds(bits: usize) -> usize {
    match bits {
        1536.. => 4,
        1024.. => 5,
        512.. => 10,
        _ => 40,
    }
}

/// The odd primes below `SIEVE_LIMIT`, computed once.
fn small_primes() -> &'static SmallPrimes {
    static PRIMES: OnceLock<SmallPrimes> = OnceLock::new();
    PRIMES.get_or_init(|| SmallPrimes::below(SIEVE_LIMIT))
}

/// A random prime of exactly `bits` bits (at least 64) with its two top bits set, so the
/// product of two such primes has exactly twice as many bits, and with `p - 1` coprime to
/// `e` (the public exponent), as RSA key generation needs. Little-endian `u64` limbs.
pub fn random_prime(env: &mut FuncEnv, bits: usize, e: u64) -> Result<Vec<u64>, String> {
    if bits < 64 {
        return Err(format!("prime size {bits} is too small"));
    }
    let len = bits.div_ceil(64);
    loop {
        let start = random_start(env, bits, len);
        let struck = sieve(&start);
        let start_mod_e = if e > 1 { mod_small(&start, e) } else { 0 };
        for (i, &out) in struck.iter().enumerate() {
            if out {
                continue;
            }
            let offset = 2 * i as u64;
            if e > 1 && gcd((start_mod_e + offset % e + e - 1) % e, e) != 1 {
                continue;
            }
            let mut candidate = start.clone();
            if !add_small(&mut candidate, offset) || bit_len(&candidate) != bits {
                break; // ran past `bits` bits: draw a new start
            }
            if is_probable_prime(env, &candidate) {
                return Ok(candidate);
            }
        }
    }
}

/// Random odd number of exactly `bits` bits with its two top bits set.
fn random_start(env: &mut FuncEnv, bits: usize, len: usize) -> Vec<u64> {
    let mut x: Vec<u64> = (0..len).map(|_| env.next_u64()).collect();
    let top_bits = bits - 64 * (len - 1); // 1..=64 bits used in the top limb
    let top = &mut x[len - 1];
    if top_bits < 64 {
        *top &= (1u64 << top_bits) - 1;
    }
    *top |= 1u64 << (top_bits - 1);
    // The second bit from the top may sit in the limb below when the top limb has one bit.
    if top_bits >= 2 {
        *top |= 1u64 << (top_bits - 2);
    } else {
        x[len - 2] |= 1u64 << 63;
    }
    x[0] |= 1;
    x
}

/// `struck[i]` is true when `start + 2i` has a factor below `SIEVE_LIMIT`.
fn sieve(start: &[u64]) -> Vec<bool> {
    let mut struck = vec![false; WINDOW];
    small_primes().for_each_residue(start, |p, r| {
        let (p, r) = (u64::from(p), u64::from(r));
        // The first i with r + 2i ≡ 0 (mod p): i ≡ -r · 2⁻¹, and 2⁻¹ ≡ (p+1)/2.
        let mut i = ((p - r) % p * p.div_ceil(2) % p) as usize;
        while i < WINDOW {
            struck[i] = true;
            i += p as usize;
        }
    });
    struck
}

/// Miller-Rabin: a base-2 round first, which rejects almost every composite the sieve let
/// through at the cost of squarings alone, then `random_rounds` rounds with random bases on
/// the candidates that pass it. `n` odd, at least 64 bits.
pub fn is_probable_prime(env: &mut FuncEnv, n: &[u64]) -> bool {
    let Some(m) = Modulus::new(n) else {
        return false;
    };
    // n - 1 = d · 2^s with d odd (n is odd: no borrow).
    let mut d = n.to_vec();
    d[0] -= 1;
    let s = trailing_zeros(&d);
    shift_right(&mut d, s);
    let test = Witness::new(&m, s);
    if !test.passes(m.pow2(&d)) {
        return false;
    }
    (0..random_rounds(bit_len(n))).all(|_| {
        let a = random_base(env, n);
        test.passes(m.pow(&m.to_mont(&a), &d))
    })
}

/// One Miller-Rabin round's verdict on `x = a^d` (Montgomery form), n - 1 = d·2^s.
struct Witness<'m> {
    m: &'m Modulus,
    s: usize,
    one: Vec<u64>,
    minus_one: Vec<u64>,
}

impl<'m> Witness<'m> {
    fn new(m: &'m Modulus, s: usize) -> Self {
        let one = m.one().to_vec();
        // n - 1 in Montgomery form is n - R mod n.
        let mut minus_one = m.modulus().to_vec();
        super::montgomery::sub_in_place(&mut minus_one, &one);
        Witness {
            m,
            s,
            one,
            minus_one,
        }
    }

    /// True when n is a strong probable prime to this base: a^d = ±1, or a^(d·2^r) = -1
    /// for some r < s.
    fn passes(&self, mut x: Vec<u64>) -> bool {
        if x == self.one || x == self.minus_one {
            return true;
        }
        let (mut tmp, mut t) = (vec![0u64; x.len()], self.m.scratch());
        for _ in 1..self.s {
            self.m.square(&mut x, &mut tmp, &mut t);
            if x == self.minus_one {
                return true;
            }
            if x == self.one {
                return false;
            }
        }
        false
    }
}

/// A random base 2 ≤ a < n - 1: below 2^(bits(n) - 1), which is at most n - 1.
fn random_base(env: &mut FuncEnv, n: &[u64]) -> Vec<u64> {
    let bits = bit_len(n) - 1;
    loop {
        let mut a: Vec<u64> = (0..n.len()).map(|_| env.next_u64()).collect();
        for (i, limb) in a.iter_mut().enumerate() {
            let low = 64 * i;
            if low >= bits {
                *limb = 0;
            } else if bits - low < 64 {
                *limb &= (1u64 << (bits - low)) - 1;
            }
        }
        let mut two = vec![0u64; n.len()];
        two[0] = 2;
        if !less(&a, &two) {
            return a;
        }
    }
}

fn mod_small(x: &[u64], p: u64) -> u64 {
    x.iter()
        .rev()
        .fold(0u128, |r, &limb| ((r << 64) | limb as u128) % p as u128) as u64
}

/// x += v; false when the sum overflows the limbs.
fn add_small(x: &mut [u64], v: u64) -> bool {
    let mut carry = v;
    for limb in x.iter_mut() {
        if carry == 0 {
            return true;
        }
        let (s, c) = limb.overflowing_add(carry);
        *limb = s;
        carry = c as u64;
    }
    carry == 0
}

fn trailing_zeros(x: &[u64]) -> usize {
    x.iter()
        .position(|l| *l != 0)
        .map_or(0, |i| 64 * i + x[i].trailing_zeros() as usize)
}

fn shift_right(x: &mut [u64], bits: usize) {
    let (limbs, rest) = (bits / 64, bits % 64);
    let len = x.len();
    for i in 0..len {
        let lo = x.get(i + limbs).copied().unwrap_or(0);
        let hi = x.get(i + limbs + 1).copied().unwrap_or(0);
        x[i] = if rest == 0 {
            lo
        } else {
            (lo >> rest) | (hi << (64 - rest))
        };
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::BigUint;

    fn big(l: &[u64]) -> BigUint {
        let bytes: Vec<u8> = l.iter().flat_map(|x| x.to_le_bytes()).collect();
        BigUint::from_bytes_le(&bytes)
    }

    #[test]
    fn known_primes_and_composites() {
        let mut env = FuncEnv::default();
        // 2^127 - 1 and 2^521 - 1 (Mersenne primes), 2^255 - 19.
        let m127 = vec![u64::MAX, u64::MAX >> 1];
        assert!(is_probable_prime(&mut env, &m127));
        let mut m521 = vec![u64::MAX; 9];
        m521[8] = (1 << 9) - 1;
        assert!(is_probable_prime(&mut env, &m521));
        let p25519 = vec![
            0xffff_ffff_ffff_ffed,
            u64::MAX,
            u64::MAX,
            0x7fff_ffff_ffff_ffff,
        ];
        assert!(is_probable_prime(&mut env, &p25519));
        // 2^128 + 1 = 59649589127497217 · 5704689200685129054721, and a product of two primes.
        assert!(!is_probable_prime(&mut env, &[1, 0, 1]));
        let product = &big(&m127) * &big(&p25519);
        let bytes = product.to_bytes_le();
        let limbs: Vec<u64> = bytes
            .chunks(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        assert!(!is_probable_prime(&mut env, &limbs));
        // A strong pseudoprime to bases 2, 3, 5, 7, 11 and 13 (Jaeschke): random bases catch it.
        assert!(!is_probable_prime(&mut env, &[3_474_749_660_383]));
    }

    #[test]
    fn random_primes_have_the_requested_shape() {
        let mut env = FuncEnv::new(42, 0, 0);
        for bits in [64usize, 65, 512, 1024] {
            let p = random_prime(&mut env, bits, 65_537).unwrap();
            let b = big(&p);
            assert_eq!(b.bits(), bits);
            assert_eq!(&b >> (bits - 2), BigUint::from(3u32), "two top bits set");
            assert!(
                num_bigint_check(&b),
                "{bits}-bit prime fails the reference test"
            );
            assert_ne!(&(&b - 1u32) % 65_537u32, BigUint::from(0u32));
        }
    }

    /// An independent primality check: the rsa crate's bignum library.
    fn num_bigint_check(b: &BigUint) -> bool {
        // Fermat test to several bases with the reference modpow.
        [2u32, 3, 5, 7, 11, 13]
            .iter()
            .all(|a| BigUint::from(*a).modpow(&(b - 1u32), b) == BigUint::from(1u32))
    }

    #[test]
    fn the_sieve_strikes_exactly_the_multiples_of_small_primes() {
        let mut env = FuncEnv::new(9, 0, 0);
        let start = random_start(&mut env, 1024, 16);
        let struck = sieve(&start);
        let base = big(&start);
        let primes = small_primes().primes();
        // The first 300 window positions against trial division by the reference bignum.
        for (i, &out) in struck.iter().enumerate().take(300) {
            let x = &base + 2u32 * i as u32;
            let has_factor = primes.iter().any(|&p| (&x % p) == BigUint::from(0u32));
            assert_eq!(out, has_factor, "position {i}");
        }
        // About ∏(1 - 1/p) ≈ 2e^-γ / ln 2^16 ≈ 10% of the odd numbers survive.
        let survivors = struck.iter().filter(|s| !**s).count();
        assert!((300..520).contains(&survivors), "{survivors} survivors");
    }

    #[test]
    fn too_small_sizes_are_refused() {
        assert!(random_prime(&mut FuncEnv::default(), 32, 65_537).is_err());
    }
}
