/*
 * banded matrix-vector product with the band stored by diagonals: y[i] += A[i][d] x[i + d]
 * (double).
 */
void band_gemv_f64(int n, int w, double A[n][w], double x[n + w], double y[n])
{
    for (int i = 0; i < n; i++)
        for (int d = 0; d < w; d++)
            y[i] += A[i][d] * x[i + d];
}
