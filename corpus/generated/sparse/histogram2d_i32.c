/*
 * 2-D histogram of pairs of bin numbers, hist[bx[i]][by[i]] += 1 (int).
 */
void histogram2d_i32(int n, int b, int bx[n], int by[n], int hist[b][b])
{
    int i;

    for (i = 0; i < n; i++)
        hist[bx[i]][by[i]] += 1;
}
