/*
 * reversed copy, y[i] = x[n - 1 - i] (int).
 */
void reverse1d_i32(int n, int x[n], int y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = x[n - 1 - i];
}
