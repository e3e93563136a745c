/* Rejected (data-dependent bound): each row's length is read from an array, and no declared extent bounds j. */
void clear_ragged(int n, int m, int len[n], double **A)
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < len[i]; j++)
            A[i][j] = 0.0;
}
