/* y = A x, A in ELLPACK: row i holds len[i] <= K entries (val, col) padded to K. */
void spmv_ell(int n, int m, int K, const int len[n], const int col[n][K], const double val[n][K],
              const double x[m], double y[n])
{
    for (int i = 0; i < n; i++) {
        y[i] = 0.0;
        for (int j = 0; j < len[i]; j++)
            y[i] += val[i][j] * x[col[i][j]];
    }
}
