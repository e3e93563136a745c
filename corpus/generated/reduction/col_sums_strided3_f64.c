/*
 * sums over a 3-D array's first index, R[j][k] += A[i][j][k] (i outermost) (double).
 */
void col_sums_strided3_f64(int n, int m, int p, double A[n][m][p], double R[m][p])
{
    int i, j, k;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            for (k = 0; k < p; k++)
                R[j][k] += A[i][j][k];
}
