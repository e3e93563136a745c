/*
 * dot: inner product of two vectors. The accumulator lives outside the loop
 * nest, so the nest region is only the for loop.
 */
double dot(int n, const double x[n], const double y[n])
{
    double acc = 0.0;
    int i;

    for (i = 0; i < n; ++i)
        acc += x[i] * y[i];
    return acc;
}
