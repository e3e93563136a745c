/*
 * column sums c[j] += A[i][j], columns outside (strided) (int).
 */
void col_sums_ji_i32(int n, int m, int A[n][m], long c[m])
{
    int j, i;

    for (j = 0; j < m; j++)
        for (i = 0; i < n; i++)
            c[j] += A[i][j];
}
