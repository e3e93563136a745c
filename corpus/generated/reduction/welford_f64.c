/*
 * one-pass mean and variance (Welford): the update divides by the iteration count (double).
 */
void welford_f64(int n, double x[n], double out[2])
{
    int i;
    double mean = 0.0;
    double m2 = 0.0;

    for (i = 0; i < n; ++i) {
        double d = x[i] - mean;
        mean += d / (i + 1);
        m2 += d * (x[i] - mean);
    }
    out[0] = mean;
    out[1] = m2 / n;
}
