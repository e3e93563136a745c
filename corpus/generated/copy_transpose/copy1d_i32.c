/*
 * vector copy (int).
 */
void copy1d_i32(int n, int x[n], int y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = x[i];
}
