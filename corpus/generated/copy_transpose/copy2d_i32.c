/*
 * matrix copy (int).
 */
void copy2d_i32(int n, int m, int A[n][m], int B[n][m])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            B[i][j] = A[i][j];
}
