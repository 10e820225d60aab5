"""The random streams attnlab's synthetic tasks draw from, replicated bit for bit.

attnlab builds its eval sets and probes with ``std::mt19937_64`` seeded by ``mix_seed(seed,
salt)`` (core/data/tasks.cpp) and draws integers with ``std::uniform_int_distribution``. The
engine is fixed by the C++ standard; the distribution is not, so this follows libstdc++ as of
GCC 11 (Lemire's nearly divisionless method on 128-bit products), which is what attnlab is built
with on Debian. A binary built with another standard library would draw other examples: the
equivalence test (tests/python/test_equivalence.py) would then fail loudly on the synthetic
tasks, not silently.

Pure Python integers: slow (about a microsecond a draw) but eval sets are a few thousand draws.
"""

M64 = (1 << 64) - 1


def mix_seed(seed, salt):
    """core/data/tasks.cpp's mix_seed: splitmix64 of (seed, salt), a stream seed."""
    z = (seed + 0x9E3779B97F4A7C15 * (salt + 1)) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class StdRng:
    """std::mt19937_64 plus libstdc++'s uniform_int_distribution over it."""

    def __init__(self, seed):
        self.mt, self.i = [seed & M64], 312
        for k in range(1, 312):
            self.mt.append((6364136223846793005 * (self.mt[-1] ^ (self.mt[-1] >> 62)) + k) & M64)

    def next(self):
        """The engine's next 64-bit output."""
        if self.i >= 312:
            mt = self.mt
            for k in range(312):
                y = (mt[k] & ~0x7FFFFFFF & M64) | (mt[(k + 1) % 312] & 0x7FFFFFFF)
                mt[k] = mt[(k + 156) % 312] ^ (y >> 1) ^ (0xB5026F5AA96619E9 if y & 1 else 0)
            self.i = 0
        y = self.mt[self.i]
        self.i += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        return y ^ (y >> 43)

    def uniform(self, a, b):
        """uniform_int_distribution(a, b)(engine): inclusive, any integer type (libstdc++ takes
        the same 64-bit path for int, int64_t and size_t over a 64-bit engine)."""
        r = b - a + 1
        product = self.next() * r
        if product & M64 < r:
            threshold = (-r) % r
            while product & M64 < threshold:
                product = self.next() * r
        return a + (product >> 64)

    def symbols(self, n, v):
        """SyntheticTask::random_symbols: n draws from 0..v-1."""
        return [self.uniform(0, v - 1) for _ in range(n)]

    def distinct(self, n, v):
        """SyntheticTask::distinct_symbols: a partial Fisher-Yates with its own draws."""
        all_ = list(range(v))
        for i in range(n):
            j = self.uniform(i, v - 1)
            all_[i], all_[j] = all_[j], all_[i]
        return all_[:n]
