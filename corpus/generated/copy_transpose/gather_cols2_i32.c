/*
 * every second column, B[i][j] = A[i][2 j] (int).
 */
void gather_cols2_i32(int n, int m, int A[n][2 * m], int B[n][m])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            B[i][j] = A[i][2 * j];
}
