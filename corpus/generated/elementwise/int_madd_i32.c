/*
 * integer multiply-add c = a b + c (int).
 */
void int_madd_i32(int n, int a[n], int b[n], int c[n])
{
    for (int i = 0; i < n; i++)
        c[i] = a[i] * b[i] + c[i];
}
