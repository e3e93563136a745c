/*
 * trmm: B <- alpha * U B in place, U upper triangular with implicit unit
 * diagonal. Row i of the result needs rows k > i of the old B, which are still
 * untouched because rows are produced top-down.
 */
void trmm_upper(int m, int n, double alpha, double U[m][m], double B[m][n])
{
    int i, j, k;

    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            for (k = i + 1; k < m; k++)
                B[i][j] += U[i][k] * B[k][j];
            B[i][j] = alpha * B[i][j];
        }
}
