/*
 * 3-D permutation B[k][j][i] = A[i][j][k], loops in read order (int).
 */
void permute3d_kji_i32(int n, int m, int p, int A[n][m][p], int B[p][m][n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < p; k++)
                B[k][j][i] = A[i][j][k];
}
