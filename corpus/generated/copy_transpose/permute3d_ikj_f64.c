/*
 * 3-D permutation B[i][k][j] = A[i][j][k], loops in read order (double).
 */
void permute3d_ikj_f64(int n, int m, int p, double A[n][m][p], double B[n][p][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < p; k++)
                B[i][k][j] = A[i][j][k];
}
