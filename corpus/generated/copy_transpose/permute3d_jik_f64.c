/*
 * 3-D permutation B[j][i][k] = A[i][j][k], loops in read order (double).
 */
void permute3d_jik_f64(int n, int m, int p, double A[n][m][p], double B[m][n][p])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < p; k++)
                B[j][i][k] = A[i][j][k];
}
