/*
 * one matrix applied to a batch of vectors, Y[b] += A X[b], order ibj (double).
 */
void bgemv_shared_ibj_f64(int nb, int n, int m, double A[n][m], double X[nb][m], double Y[nb][n])
{
    int i, b, j;

    for (i = 0; i < n; i++)
        for (b = 0; b < nb; b++)
            for (j = 0; j < m; j++)
                Y[b][i] += A[i][j] * X[b][j];
}
