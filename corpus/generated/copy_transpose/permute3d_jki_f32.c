/*
 * 3-D permutation B[j][k][i] = A[i][j][k], loops in read order (float).
 */
void permute3d_jki_f32(int n, int m, int p, float A[n][m][p], float B[m][p][n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < p; k++)
                B[j][k][i] = A[i][j][k];
}
