/*
 * 3-D permutation B[k][i][j] = A[i][j][k], loops in read order (float).
 */
void permute3d_kij_f32(int n, int m, int p, float A[n][m][p], float B[p][n][m])
{
    int i, j, k;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            for (k = 0; k < p; k++)
                B[k][i][j] = A[i][j][k];
}
