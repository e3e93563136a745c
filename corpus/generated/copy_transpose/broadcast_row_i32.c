/*
 * fill every row of a matrix with a vector, B[i][j] = v[j] (int).
 */
void broadcast_row_i32(int n, int m, int v[m], int B[n][m])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            B[i][j] = v[j];
}
