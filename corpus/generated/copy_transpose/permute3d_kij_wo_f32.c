/*
 * 3-D permutation B[k][i][j] = A[i][j][k], loops in write order (float).
 */
void permute3d_kij_wo_f32(int n, int m, int p, float A[n][m][p], float B[p][n][m])
{
    for (int k = 0; k < p; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < m; j++)
                B[k][i][j] = A[i][j][k];
}
