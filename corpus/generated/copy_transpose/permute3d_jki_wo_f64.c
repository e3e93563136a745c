/*
 * 3-D permutation B[j][k][i] = A[i][j][k], loops in write order (double).
 */
void permute3d_jki_wo_f64(int n, int m, int p, double A[n][m][p], double B[m][p][n])
{
    for (int j = 0; j < m; j++)
        for (int k = 0; k < p; k++)
            for (int i = 0; i < n; i++)
                B[j][k][i] = A[i][j][k];
}
