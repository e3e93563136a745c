/* Histogram of bin indices. */
void histogram(int n, int nbins, const int bin[n], int hist[nbins])
{
    for (int i = 0; i < n; i++)
        hist[bin[i]] += 1;
}
