/*
 * sum of squares of an int vector into a long (int).
 */
long sumsq_int_i32(int n, int x[n])
{
    long s = 0;

    for (int i = 0; i < n; ++i)
        s += x[i] * x[i];
    return s;
}
