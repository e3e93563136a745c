/* Masked update: y = a x + y where the mask is set, y halved elsewhere. */
void masked_axpy(int n, double a, const int mask[n], const double x[n], double y[n])
{
    for (int i = 0; i < n; i++)
        if (mask[i] > 0)
            y[i] = a * x[i] + y[i];
        else
            y[i] = 0.5 * y[i];
}
