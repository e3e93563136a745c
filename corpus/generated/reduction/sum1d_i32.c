/*
 * sum of a vector into a scalar accumulator (int into long) (int).
 */
long sum1d_i32(int n, int x[n])
{
    long s = 0;

    for (int i = 0; i < n; ++i)
        s += x[i];
    return s;
}
