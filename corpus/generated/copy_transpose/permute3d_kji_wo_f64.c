/*
 * 3-D permutation B[k][j][i] = A[i][j][k], loops in write order (double).
 */
void permute3d_kji_wo_f64(int n, int m, int p, double A[n][m][p], double B[p][m][n])
{
    int k, j, i;

    for (k = 0; k < p; k++)
        for (j = 0; j < m; j++)
            for (i = 0; i < n; i++)
                B[k][j][i] = A[i][j][k];
}
