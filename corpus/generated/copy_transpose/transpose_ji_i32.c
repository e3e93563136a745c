/*
 * out-of-place transpose B[j][i] = A[i][j], loop order ji (int).
 */
void transpose_ji_i32(int n, int m, int A[n][m], int B[m][n])
{
    int j, i;

    for (j = 0; j < m; j++)
        for (i = 0; i < n; i++)
            B[j][i] = A[i][j];
}
