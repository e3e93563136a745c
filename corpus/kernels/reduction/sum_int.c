/* Sum of an int vector into a long accumulator. */
long sum_int(int n, int v[n])
{
    long total = 0;

    for (int i = 0; i < n; i++)
        total += v[i];
    return total;
}
