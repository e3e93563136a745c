/*
 * trmv: x <- U x in place, U upper triangular. Rows are visited top-down, so
 * the entries x[j] with j > i are still the original values when row i reads them.
 */
void trmv_upper(int n, double U[n][n], double x[n])
{
    for (int i = 0; i < n; i++) {
        x[i] = U[i][i] * x[i];
        for (int j = i + 1; j < n; j++)
            x[i] += U[i][j] * x[j];
    }
}
