/* Row sums of an m x n matrix; each output entry is reset, then accumulated. */
void row_sums(int m, int n, double A[m][n], double r[m])
{
    int i, j;

#pragma scop
    for (i = 0; i < m; i++) {
        r[i] = 0.0;
        for (j = 0; j < n; j++)
            r[i] += A[i][j];
    }
#pragma endscop
}
