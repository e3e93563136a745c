/*
 * weighted histogram hist[bin[i]] += w[i] (double).
 */
void weighted_histogram_f64(int n, int b, int bin[n], double w[n], double hist[b])
{
    for (int i = 0; i < n; i++)
        hist[bin[i]] += w[i];
}
