//! The odd primes below a bound and the remainders of a big number by each of them, for the
//! sieve of `primes.rs`. The remainders cost no division of the big number: the primes are
//! grouped into products below 2^32, the number is reduced by each product 32 bits at a
//! time with Barrett's method (two multiplications in place of a `u128` remainder, which is
//! a slow library call), and each prime's remainder comes from its group's.

/// Odd primes below `limit` grouped into products below 2^32.
pub struct SmallPrimes {
    primes: Vec<u32>,
    groups: Vec<Group>,
}

/// A product of consecutive primes `primes[start..end]`, with its Barrett reciprocal.
struct Group {
    product: u64,
    /// ⌊2^64 / product⌋.
    reciprocal: u64,
    start: usize,
    end: usize,
}

impl SmallPrimes {
    /// The odd primes below `limit` (Eratosthenes), `limit` ≤ 2^32.
    pub fn below(limit: usize) -> SmallPrimes {
        let mut composite = vec![false; limit];
        let mut primes = Vec::new();
        for i in (3..limit).step_by(2) {
            if composite[i] {
                continue;
            }
            primes.push(i as u32);
            for j in (i * i..limit).step_by(2 * i) {
                composite[j] = true;
            }
        }
        let mut groups: Vec<Group> = Vec::new();
        for (i, &p) in primes.iter().enumerate() {
            match groups.last_mut() {
                Some(g) if g.product * u64::from(p) < 1 << 32 => {
                    g.product *= u64::from(p);
                    g.end = i + 1;
                }
                _ => groups.push(Group {
                    product: u64::from(p),
                    reciprocal: 0,
                    start: i,
                    end: i + 1,
                }),
            }
        }
        for g in &mut groups {
            g.reciprocal = ((1u128 << 64) / u128::from(g.product)) as u64;
        }
        SmallPrimes { primes, groups }
    }

    #[cfg(test)]
    pub fn primes(&self) -> &[u32] {
        &self.primes
    }

    /// Calls `f(p, x mod p)` for every prime, in increasing order (`x`: little-endian limbs).
    pub fn for_each_residue(&self, x: &[u64], mut f: impl FnMut(u32, u32)) {
        for g in &self.groups {
            let r = g.residue(x) as u32;
            for &p in &self.primes[g.start..g.end] {
                f(p, r % p);
            }
        }
    }
}

impl Group {
    fn residue(&self, x: &[u64]) -> u64 {
        x.iter().rev().fold(0, |r, &limb| {
            let r = self.reduce((r << 32) | (limb >> 32));
            self.reduce((r << 32) | (limb & 0xffff_ffff))
        })
    }

    /// v mod product for any u64 v: the quotient estimate ⌊v·reciprocal / 2^64⌋ is the true
    /// quotient or one less, so one subtraction corrects it.
    fn reduce(&self, v: u64) -> u64 {
        let q = ((u128::from(v) * u128::from(self.reciprocal)) >> 64) as u64;
        let r = v - q * self.product;
        if r >= self.product {
            r - self.product
        } else {
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::BigUint;

    #[test]
    fn the_odd_primes_below_the_limit() {
        let sp = SmallPrimes::below(1 << 13);
        assert_eq!(&sp.primes()[..6], &[3, 5, 7, 11, 13, 17]);
        assert_eq!(sp.primes().len(), 1027); // π(8192) = 1028, minus 2
        assert_eq!(sp.primes().last(), Some(&8191));
        assert_eq!(SmallPrimes::below(1 << 16).primes().len(), 6541); // π(65536) - 1
        assert!(sp.groups.iter().all(|g| g.product < 1 << 32));
        assert_eq!(
            sp.groups[0].product,
            3 * 5 * 7 * 11 * 13 * 17 * 19 * 23 * 29
        );
    }

    #[test]
    fn residues_match_a_reference_bignum() {
        let sp = SmallPrimes::below(1 << 17);
        let mut seed = 0x1234_5678_9abc_def0u64;
        for len in [1usize, 2, 16, 32] {
            let x: Vec<u64> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed
                })
                .collect();
            // All ones in every limb too: the largest value each reduction sees.
            for x in [x, vec![u64::MAX; len]] {
                let bytes: Vec<u8> = x.iter().flat_map(|l| l.to_le_bytes()).collect();
                let big = BigUint::from_bytes_le(&bytes);
                let mut seen = 0;
                sp.for_each_residue(&x, |p, r| {
                    assert_eq!(BigUint::from(r), &big % p, "{x:?} mod {p}");
                    seen += 1;
                });
                assert_eq!(seen, sp.primes().len());
            }
        }
    }
}
