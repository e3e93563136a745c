/*
 * elementwise product C = A .* B traversed column by column (double).
 */
void hadamard_ji_f64(int n, int m, double A[n][m], double B[n][m], double C[n][m])
{
    int j, i;

    for (j = 0; j < m; j++)
        for (i = 0; i < n; i++)
            C[i][j] = A[i][j] * B[i][j];
}
