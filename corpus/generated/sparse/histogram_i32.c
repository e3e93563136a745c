/*
 * histogram of bin numbers, hist[bin[i]] += 1 (int).
 */
void histogram_i32(int n, int b, int bin[n], int hist[b])
{
    for (int i = 0; i < n; i++)
        hist[bin[i]] += 1;
}
