/*
 * count of positive entries per column (double).
 */
void count_positive_f64(int n, int m, double A[n][m], int cnt[m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            if (A[i][j] > 0.0)
                cnt[j] += 1;
}
